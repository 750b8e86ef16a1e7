import BluewireCore
import BluewireHostEngine

/// Drives a `HostEngine` by hand, as SwiftNIO's `EmbeddedChannel` drives a channel pipeline: the
/// test pushes controller packets in (`controller(_:)`), reads the packets the host wrote
/// (`takeWritten()`), asks for things (`perform(_:)`) and moves virtual time (`advance(by:)`).
/// There is no thread, no task, no sleep and no clock: after every call, everything the engine
/// decided is already in `written`, `completions` and `events`, so a test never polls or waits.
///
/// It is what the engine's own tests use, and what a test of an application built on the engine (a
/// firmware's GATT logic, a scripted central) can use to replay a controller's answers:
///
/// ```swift
/// var host = EmbeddedHostEngine()
/// let start = host.perform(.start)
/// for packet in host.takeWritten() { host.controller(answer(to: packet)) }   // HCI Reset, …
/// #expect(host.result(start) != nil)
/// host.advance(by: .seconds(30))                                          // an ATT timeout, say
/// ```
public struct EmbeddedHostEngine {
    /// The engine, to read its state (`state(of:)`, `connectionHandles`, …) or feed it directly.
    public var engine: HostEngine
    /// The engine's current time; `advance(by:)` moves it. Starts at 1 s.
    public var now = MonotonicInstant(microseconds: 1_000_000)
    /// Every HCI packet the host wrote, in order (never cleared).
    public var written: [HCIPacket] = []
    /// Packets written and not yet taken by `takeWritten`.
    public var unread: [HCIPacket] = []
    /// Every completion, in the order the engine gave them.
    public var completions: [(HostRequestID, Result<HostCompletion, HostEngineError>)] = []
    /// Events not yet taken by `takeEvents`.
    public var events: [HostEngineEvent] = []
    /// The id the next `perform` uses.
    public var nextID: UInt32 = 1

    /// A host engine with `configuration`; nothing happens until the first `perform` or packet.
    public init(configuration: HostEngineConfiguration = HostEngineConfiguration(
        randomAddress: BluetoothAddress(parsing: "C4:5A:17:00:B1:0E/random") ?? BluetoothAddress(value: 0xC45A1700B10E, type: .random))) {
        engine = HostEngine(configuration: configuration)
    }

    /// Takes every output the engine has: packets to `written`/`unread`, completions and events.
    /// Every other method calls it; call it after feeding `engine` directly.
    public mutating func drain() {
        while let output = engine.nextOutput() {
            switch output {
            case .send(let packet):
                written.append(packet)
                unread.append(packet)
            case .completed(let id, let result): completions.append((id, result))
            case .event(let event): events.append(event)
            }
        }
    }

    /// Asks the engine for `request` now; returns its id, to find its completion with `result(_:)`.
    @discardableResult
    public mutating func perform(_ request: HostRequest) -> HostRequestID {
        let id = HostRequestID(nextID)
        nextID += 1
        engine.perform(request, id: id, now: now)
        drain()
        return id
    }

    /// One packet from the controller (an event or ACL data), received now.
    public mutating func controller(_ packet: HCIPacket) {
        engine.receive(packet, now: now)
        drain()
    }

    /// Moves time on by `span`; whatever times out in it (commands, ATT transactions, connection
    /// attempts, scans) does so now.
    public mutating func advance(by span: TimeSpan) {
        now = now + span
        engine.advanceTime(to: now)
        drain()
    }

    /// The packets written since the last call, in order.
    public mutating func takeWritten() -> [HCIPacket] {
        defer { unread.removeAll() }
        return unread
    }

    /// The completion of request `id`, once the engine gave it.
    public func result(_ id: HostRequestID) -> Result<HostCompletion, HostEngineError>? {
        completions.first { $0.0 == id }?.1
    }

    /// The events since the last call, in order.
    public mutating func takeEvents() -> [HostEngineEvent] {
        defer { events.removeAll() }
        return events
    }
}
