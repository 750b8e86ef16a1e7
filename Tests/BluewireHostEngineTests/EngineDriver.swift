import BluewireCore
import BluewireHostEngine
import Testing

/// Drives a `HostEngine` by hand, like SwiftNIO's EmbeddedChannel: push controller packets in,
/// read the host's packets out, move virtual time. No sleeps, no threads.
struct EngineDriver {
    var engine: HostEngine
    var now = MonotonicInstant(microseconds: 1_000_000)
    /// Every HCI packet the host wrote, in order (never cleared).
    var written: [HCIPacket] = []
    /// Packets written and not yet taken by `takeWritten`.
    var unread: [HCIPacket] = []
    var completions: [(HostRequestID, Result<HostCompletion, HostEngineError>)] = []
    var events: [HostEngineEvent] = []
    var nextID: UInt32 = 1

    init(configuration: HostEngineConfiguration = HostEngineConfiguration(
        randomAddress: BluetoothAddress(parsing: "C4:5A:17:00:B1:0E/random") ?? BluetoothAddress(value: 0xC45A1700B10E, type: .random))) {
        engine = HostEngine(configuration: configuration)
    }

    mutating func drain() {
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

    @discardableResult
    mutating func perform(_ request: HostRequest) -> HostRequestID {
        let id = HostRequestID(nextID)
        nextID += 1
        engine.perform(request, id: id, now: now)
        drain()
        return id
    }

    mutating func controller(_ packet: HCIPacket) {
        engine.receive(packet, now: now)
        drain()
    }

    mutating func advance(by span: TimeSpan) {
        now = now + span
        engine.advanceTime(to: now)
        drain()
    }

    mutating func takeWritten() -> [HCIPacket] {
        defer { unread.removeAll() }
        return unread
    }

    func result(_ id: HostRequestID) -> Result<HostCompletion, HostEngineError>? {
        completions.first { $0.0 == id }?.1
    }

    mutating func takeEvents() -> [HostEngineEvent] {
        defer { events.removeAll() }
        return events
    }
}
