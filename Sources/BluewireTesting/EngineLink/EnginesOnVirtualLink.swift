import BluewireCore
import BluewireHCI
import BluewireHostEngine
import BluewireSnoop

/// One `HostEngine` with its virtual controller, as `EnginesOnVirtualLink` drives it.
public struct EngineStation: Sendable {
    public var engine: HostEngine
    public let controller: VirtualController
    /// Every request's result, by ID.
    public var completions: [HostRequestID: Result<HostCompletion, HostEngineError>] = [:]
    /// Events not yet taken with `takeEvents`.
    public var events: [HostEngineEvent] = []
    var nextID: UInt32 = 1

    /// The result of a request, once it finished.
    public func result(_ id: HostRequestID) -> Result<HostCompletion, HostEngineError>? { completions[id] }

    public mutating func takeEvents() -> [HostEngineEvent] {
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }
}

/// An HCI packet that crossed one station's HCI, at a virtual time (for btsnoop captures).
public struct EngineLinkPacket: Sendable {
    public var station: Int
    public var direction: PacketDirection
    public var time: MonotonicInstant
    public var packet: HCIPacket
}

/// Two sans-I/O host engines, each on its own `VirtualController`, joined by one `VirtualLink` and
/// driven by hand in the link's virtual time: what an engine writes goes to its controller at once,
/// what a controller sends goes to its engine at once, and time moves only in `step`/`run`, from one
/// deadline (the link's or an engine's) to the next. No task, no wall clock: the same inputs give the
/// same packets at the same virtual times, with or without radio timing.
///
/// Station 0 is the central, station 1 the peripheral. With `recordsPackets`, every packet crossing
/// either HCI is kept, for a btsnoop capture of the session (`btsnoop(station:)`).
public struct EnginesOnVirtualLink: Sendable {
    public static let centralAddress = BluetoothAddress(value: 0xC4_5A_17_00_E0_01, type: .random)
    public static let peripheralAddress = BluetoothAddress(value: 0xC4_5A_17_00_E0_02, type: .random)

    public let link: VirtualLink
    public var stations: [EngineStation]
    public var recordsPackets: Bool
    public private(set) var packets: [EngineLinkPacket] = []
    /// Opcodes of commands the scene injected into a controller, whose answers its engine must not see.
    var injected: [[UInt16]] = [[], []]

    public var central: EngineStation {
        get { stations[0] }
        set { stations[0] = newValue }
    }
    public var peripheral: EngineStation {
        get { stations[1] }
        set { stations[1] = newValue }
    }
    public var clock: TestClock { link.clock }
    public var now: MonotonicInstant { link.clock.monotonicNow }

    /// Both engines brought up on their controllers (`controller` adjusts each controller's
    /// configuration; `preferredMTU` is each engine's ATT Rx MTU; `engine` adjusts each engine's
    /// configuration, given the station: 0 the central, 1 the peripheral).
    public init(
        timing: VirtualLink.Timing, preferredMTU: UInt16 = 247, recordsPackets: Bool = false,
        controller adjust: (inout VirtualController.Configuration) -> Void = { _ in },
        engine adjustEngine: (Int, inout HostEngineConfiguration) -> Void = { _, _ in }
    ) throws(EngineLinkError) {
        link = VirtualLink(clock: TestClock(start: MonotonicInstant(microseconds: 1_000_000)), timing: timing)
        self.recordsPackets = recordsPackets
        var built: [EngineStation] = []
        for (index, address) in [Self.centralAddress, Self.peripheralAddress].enumerated() {
            var configuration = VirtualController.Configuration(
                publicAddress: BluetoothAddress(value: 0x00_1B_DC_70_00_01 + UInt64(index), type: .public))
            adjust(&configuration)
            var engineConfiguration = HostEngineConfiguration(randomAddress: address, preferredMTU: preferredMTU)
            adjustEngine(index, &engineConfiguration)
            let engine = HostEngine(configuration: engineConfiguration)
            built.append(EngineStation(engine: engine, controller: link.addController(configuration)))
        }
        stations = built
        let starts = [perform(.start, on: 0), perform(.start, on: 1)]
        try run(until: { $0.stations[0].result(starts[0]) != nil && $0.stations[1].result(starts[1]) != nil }, within: .seconds(5))
        for station in 0..<2 {
            guard case .success(.started)? = stations[station].result(starts[station]) else {
                throw .bringUpFailed(String(describing: stations[station].result(starts[station])))
            }
        }
    }

    // MARK: requests

    /// The peripheral advertises, the central connects with `parameters`; returns the central's handle.
    public mutating func connect(_ parameters: LEConnectionParameters = LEConnectionParameters()) throws(EngineLinkError) -> UInt16 {
        perform(.startAdvertising(.named("Bluewire")), on: 1)
        let connect = perform(.connect(Self.peripheralAddress, parameters), on: 0)
        try run(until: { $0.stations[0].result(connect) != nil && $0.stations[1].engine.connectionHandles.count == 1 }, within: .seconds(5))
        guard case .success(.connected(let connection))? = stations[0].result(connect) else { throw .connectionFailed }
        return connection.handle
    }

    /// The central discovers the peripheral's whole database on `handle` (`.discoverAll`), as a client
    /// does before it reads or writes: the peer's state machine refuses those before a discovery.
    @discardableResult
    public mutating func discover(_ handle: UInt16) throws(EngineLinkError) -> [DiscoveredService] {
        let discover = perform(.gatt(connection: handle, .discoverAll), on: 0)
        try run(until: { $0.stations[0].result(discover) != nil }, within: .seconds(10))
        guard case .success(.services(let services))? = stations[0].result(discover) else {
            throw .setupFailed("discovery: \(String(describing: stations[0].result(discover)))")
        }
        return services
    }

    /// Hands a request to one station's engine and carries whatever follows at once.
    @discardableResult
    public mutating func perform(_ request: HostRequest, on station: Int) -> HostRequestID {
        let id = HostRequestID(stations[station].nextID)
        stations[station].nextID += 1
        stations[station].engine.perform(request, id: id, now: now)
        settle()
        return id
    }

    /// Sends a command to a station's controller as if its host had, and keeps the answer (Command
    /// Complete or Status) from the engine, which never sent it; events that follow (PHY Update
    /// Complete, say) do reach it. For link settings the engine has no request for.
    public mutating func inject(_ command: HCICommand, on station: Int) {
        let packet = command.packet
        if let opcode = Self.commandOpcode(packet) { injected[station].append(opcode) }
        if recordsPackets { packets.append(EngineLinkPacket(station: station, direction: .hostToController, time: now, packet: packet)) }
        for answer in stations[station].controller.receive(hostPacket: packet) { toEngine(answer, station: station) }
        settle()
    }

    // MARK: time

    /// Carries packets between engines and controllers until nobody has anything more to say now.
    public mutating func settle() {
        var moved = true
        while moved {
            moved = false
            for station in 0..<stations.count {
                while let output = stations[station].engine.nextOutput() {
                    moved = true
                    switch output {
                    case .send(let packet):
                        if recordsPackets {
                            packets.append(EngineLinkPacket(station: station, direction: .hostToController, time: now, packet: packet))
                        }
                        for answer in stations[station].controller.receive(hostPacket: packet) { toEngine(answer, station: station) }
                    case .completed(let id, let result):
                        stations[station].completions[id] = result
                    case .event(let event):
                        stations[station].events.append(event)
                    }
                }
                for packet in stations[station].controller.takeOutput() {
                    moved = true
                    toEngine(packet, station: station)
                }
            }
        }
    }

    private mutating func toEngine(_ packet: HCIPacket, station: Int) {
        if packet.type == .event, let opcode = Self.answeredOpcode(packet),
           let slot = injected[station].firstIndex(of: opcode) {
            injected[station].remove(at: slot)
            return
        }
        if recordsPackets { packets.append(EngineLinkPacket(station: station, direction: .controllerToHost, time: now, packet: packet)) }
        stations[station].engine.receive(packet, now: now)
    }

    /// The opcode a Command Complete (0x0E) or Command Status (0x0F) answers.
    static func answeredOpcode(_ packet: HCIPacket) -> UInt16? {
        let bytes = packet.payload
        let start = bytes.startIndex
        switch bytes.first {
        case 0x0E where bytes.count >= 5: return UInt16(bytes[start + 3]) | UInt16(bytes[start + 4]) << 8
        case 0x0F where bytes.count >= 6: return UInt16(bytes[start + 4]) | UInt16(bytes[start + 5]) << 8
        default: return nil
        }
    }

    /// The opcode of a command packet.
    static func commandOpcode(_ packet: HCIPacket) -> UInt16? {
        guard packet.type == .command, packet.payload.count >= 2 else { return nil }
        let start = packet.payload.startIndex
        return UInt16(packet.payload[start]) | UInt16(packet.payload[start + 1]) << 8
    }

    /// The earliest deadline of the link or either engine.
    public var nextDeadline: MonotonicInstant? {
        var deadlines = stations.compactMap(\.engine.nextDeadline)
        if let link = clock.nextDeadline { deadlines.append(link) }
        return deadlines.min()
    }

    /// Moves time to the next deadline (not past `limit`), runs what is due there and settles.
    /// Returns false when nothing is due by `limit` (time then stands at `limit`). Anything already
    /// due runs first, at the current time; a deadline that stays due after that (a timer nobody
    /// consumes) is stepped over rather than spun on.
    @discardableResult
    public mutating func step(notAfter limit: MonotonicInstant) -> Bool {
        let start = now
        if let due = nextDeadline, due <= start {
            clock.advance(to: start)
            advanceEngines()
            if let still = nextDeadline, still <= start {} else { return true }
        }
        var later = stations.compactMap(\.engine.nextDeadline).filter { $0 > start }
        if let link = clock.nextDeadline, link > start { later.append(link) }
        guard let deadline = later.min(), deadline <= limit else {
            clock.advance(to: limit)
            advanceEngines()
            return false
        }
        clock.advance(to: deadline)
        advanceEngines()
        return true
    }

    private mutating func advanceEngines() {
        let now = self.now
        for station in 0..<stations.count { stations[station].engine.advanceTime(to: now) }
        settle()
    }

    /// Steps until `done` holds; throws if `within` passes first.
    public mutating func run(until done: (Self) -> Bool, within span: TimeSpan) throws(EngineLinkError) {
        let limit = now + span
        while !done(self) {
            guard now < limit else { throw .timedOut }
            step(notAfter: limit)
        }
    }

    /// Steps through `span` of virtual time, calling `each` after every step.
    public mutating func run(for span: TimeSpan, _ each: (inout Self) -> Void = { _ in }) {
        let limit = now + span
        while now < limit {
            step(notAfter: limit)
            each(&self)
        }
    }

    // MARK: captures

    /// The packets that crossed `station`'s HCI, as a btsnoop file (timestamps in virtual time).
    public func btsnoop(station: Int) -> [UInt8] {
        let writer = BTSnoopWriter()
        var bytes = writer.fileHeader
        for record in packets where record.station == station {
            writer.appendRecord(
                record.packet, direction: record.direction,
                timestamp: BTSnoopWriter.timestamp(unixMicroseconds: record.time.microseconds), to: &bytes)
        }
        return bytes
    }
}

/// Why an `EnginesOnVirtualLink` scene could not be set up.
public enum EngineLinkError: Error, Hashable, Sendable {
    case bringUpFailed(String)
    case connectionFailed
    case timedOut
    case setupFailed(String)
}
