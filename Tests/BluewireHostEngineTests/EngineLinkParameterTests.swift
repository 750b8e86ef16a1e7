import BluewireCore
import BluewireHCI
import BluewireHostEngine
import Testing

/// `.setDataLength`, `.updateConnection` and the `.dataLengthChanged` event (Core Vol 4 Part E
/// §7.8.33, §7.8.18, §7.7.65.3, §7.7.65.7), driven by hand.
@Suite("Host engine: link parameter requests")
struct EngineLinkParameterTests {
    static let peer = BluetoothAddress(value: 0xF0_11_22_33_44_55, type: .random)
    static let other = BluetoothAddress(value: 0xF0_11_22_33_44_66, type: .random)
    typealias Bytes = ControllerBytes

    /// A link 0x0040 as peripheral (and 0x0041 with `second`), the engine's own commands answered.
    static func connected(second: Bool = false) throws -> EngineDriver {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        driver.controller(Bytes.leConnectionComplete(handle: 0x0040, central: false, peer: peer))
        if second { driver.controller(Bytes.leConnectionComplete(handle: 0x0041, central: false, peer: other)) }
        _ = driver.answerCommands()
        _ = driver.takeEvents()
        return driver
    }

    static func commandBytes(_ packets: [HCIPacket]) -> [[UInt8]] {
        packets.filter { $0.type == .command }.map { Array($0.payload) }
    }

    /// LE Connection Update Complete (§7.7.65.3).
    static func updateComplete(_ handle: UInt16, status: UInt8 = 0, interval: UInt16, latency: UInt16, timeout: UInt16) -> HCIPacket {
        Bytes.event(0x3E, [0x03, status] + Bytes.le16(handle) + Bytes.le16(interval) + Bytes.le16(latency) + Bytes.le16(timeout))
    }

    static let parameters = LEConnectionParameters(
        connectionIntervalMin: 0x0010, connectionIntervalMax: 0x0020, maxLatency: 2, supervisionTimeout: 0x0100,
        minCELength: 1, maxCELength: 3)

    @Test("LE Set Data Length goes out as asked, its Command Complete completes .setDataLength, LE Data Length Change is an event")
    func setDataLength() throws {
        var driver = try Self.connected()
        let set = driver.perform(.setDataLength(connection: 0x0040, txOctets: 200, txTime: 1712))
        #expect(Self.commandBytes(driver.takeWritten()) == [[0x22, 0x20, 0x06, 0x40, 0x00, 0xC8, 0x00, 0xB0, 0x06]])
        #expect(driver.result(set) == nil, "not before the controller answers")
        driver.controller(Bytes.commandComplete(.leSetDataLength, returning: Bytes.le16(0x0040)))
        #expect(driver.result(set) == .success(.done))
        #expect(driver.takeEvents().isEmpty, "the lengths come with LE Data Length Change")
        driver.controller(Bytes.event(0x3E, [0x07] + Bytes.le16(0x0040) + Bytes.le16(200) + Bytes.le16(1712) + Bytes.le16(251) + Bytes.le16(2120)))
        #expect(driver.takeEvents() == [.dataLengthChanged(connection: 0x0040, maxTxOctets: 200, maxTxTime: 1712, maxRxOctets: 251, maxRxTime: 2120)])
        // One for a link the engine does not have is dropped.
        driver.controller(Bytes.event(0x3E, [0x07] + Bytes.le16(0x0050) + Bytes.le16(27) + Bytes.le16(328) + Bytes.le16(27) + Bytes.le16(328)))
        #expect(driver.takeEvents().isEmpty)
    }

    @Test("bumble's bare status 0x01 to LE Set Data Length fails .setDataLength with Unknown HCI Command")
    func setDataLengthRefused() throws {
        var driver = try Self.connected()
        let set = driver.perform(.setDataLength(connection: 0x0040, txOctets: 251, txTime: 2120))
        _ = driver.takeWritten()
        driver.controller(Bytes.commandComplete(.leSetDataLength, status: 0x01))
        #expect(driver.result(set) == .failure(.command(.failed(.leSetDataLength, .unknownHCICommand))))
    }

    @Test("LE Set Data Length values outside 27–251 octets and 328–17,040 µs are refused, nothing sent")
    func setDataLengthRanges() throws {
        var driver = try Self.connected()
        let refusals: [(UInt16, UInt16, LinkParameterError)] = [
            (26, 328, .txOctets(26)), (252, 2120, .txOctets(252)), (27, 327, .txTime(327)), (251, 17041, .txTime(17041)),
        ]
        for (octets, time, error) in refusals {
            let id = driver.perform(.setDataLength(connection: 0x0040, txOctets: octets, txTime: time))
            #expect(driver.result(id) == .failure(.linkParameters(error)), "\(octets) octets, \(time) µs")
        }
        #expect(driver.takeWritten().isEmpty)
        for (octets, time) in [(UInt16(27), UInt16(328)), (251, 17040)] {
            let id = driver.perform(.setDataLength(connection: 0x0040, txOctets: octets, txTime: time))
            #expect(Self.commandBytes(driver.takeWritten()).count == 1, "the bounds themselves go out")
            driver.controller(Bytes.commandComplete(.leSetDataLength, returning: Bytes.le16(0x0040)))
            #expect(driver.result(id) == .success(.done))
        }
    }

    @Test("LE Connection Update: Command Status accepts it, the link's LE Connection Update Complete completes it with the new parameters")
    func updateConnection() throws {
        var driver = try Self.connected(second: true)
        let update = driver.perform(.updateConnection(connection: 0x0040, Self.parameters))
        #expect(Self.commandBytes(driver.takeWritten()) == [[
            0x13, 0x20, 0x0E, 0x40, 0x00, 0x10, 0x00, 0x20, 0x00, 0x02, 0x00, 0x00, 0x01, 0x01, 0x00, 0x03, 0x00,
        ]])
        driver.controller(Bytes.commandStatus(.leConnectionUpdate))
        #expect(driver.result(update) == nil, "Command Status only accepts it")
        // Another link's update does not finish this one.
        driver.controller(Self.updateComplete(0x0041, interval: 0x0030, latency: 0, timeout: 0x0200))
        #expect(driver.result(update) == nil)
        #expect(driver.takeEvents() == [.connectionUpdated(handle: 0x0041, interval: 0x0030, latency: 0, timeout: 0x0200)])
        driver.controller(Self.updateComplete(0x0040, interval: 0x0018, latency: 2, timeout: 0x0100))
        #expect(driver.result(update) == .success(.connectionParameters(HostConnectionParameters(interval: 0x0018, latency: 2, supervisionTimeout: 0x0100))))
        #expect(driver.takeEvents() == [.connectionUpdated(handle: 0x0040, interval: 0x0018, latency: 2, timeout: 0x0100)])
        #expect(driver.engine.connection(0x0040)?.interval == 0x0018)
        #expect(driver.completions.filter { $0.0 == update }.count == 1)
    }

    @Test("LE Connection Update fails with the status of a refused Command Status or of LE Connection Update Complete")
    func updateConnectionFailures() throws {
        var driver = try Self.connected()
        let disallowed = driver.perform(.updateConnection(connection: 0x0040, Self.parameters))
        _ = driver.takeWritten()
        driver.controller(Bytes.commandStatus(.leConnectionUpdate, status: 0x0C))
        #expect(driver.result(disallowed) == .failure(.command(.failed(.leConnectionUpdate, .commandDisallowed))))

        let unsupported = driver.perform(.updateConnection(connection: 0x0040, Self.parameters))
        _ = driver.takeWritten()
        driver.controller(Bytes.commandStatus(.leConnectionUpdate))
        // A failed update reports the old parameters; the link keeps them, and no event says otherwise.
        driver.controller(Self.updateComplete(0x0040, status: 0x1A, interval: 0x0018, latency: 0, timeout: 0x00C8))
        #expect(driver.result(unsupported) == .failure(.command(.failed(.leConnectionUpdate, .unsupportedRemoteFeature))))
        #expect(driver.takeEvents().isEmpty)
    }

    @Test("LE Connection Update parameters outside §7.8.18's ranges are refused, nothing sent; the bounds go out")
    func updateConnectionRanges() throws {
        var driver = try Self.connected()
        func with(_ change: (inout LEConnectionParameters) -> Void) -> LEConnectionParameters {
            var parameters = LEConnectionParameters()
            change(&parameters)
            return parameters
        }
        let refusals: [(LEConnectionParameters, LinkParameterError)] = [
            (with { $0.connectionIntervalMin = 5 }, .connectionInterval(min: 5, max: 0x0028)),
            (with { $0.connectionIntervalMax = 0x0C81 }, .connectionInterval(min: 0x0018, max: 0x0C81)),
            (with { $0.connectionIntervalMin = 0x0030 }, .connectionInterval(min: 0x0030, max: 0x0028)),
            (with { $0.maxLatency = 0x01F4 }, .latency(0x01F4)),
            (with { $0.supervisionTimeout = 0x0009 }, .supervisionTimeout(0x0009)),
            (with { $0.supervisionTimeout = 0x0C81 }, .supervisionTimeout(0x0C81)),
            // 1,000 ms is not more than (1 + 3) × 125 ms × 2.
            (with { $0.connectionIntervalMax = 100; $0.maxLatency = 3; $0.supervisionTimeout = 100 },
             .supervisionTimeoutTooShort(timeout: 100, latency: 3, intervalMax: 100)),
            (with { $0.minCELength = 4; $0.maxCELength = 3 }, .connectionEventLength(min: 4, max: 3)),
        ]
        for (parameters, error) in refusals {
            let id = driver.perform(.updateConnection(connection: 0x0040, parameters))
            #expect(driver.result(id) == .failure(.linkParameters(error)), "\(parameters)")
        }
        #expect(driver.takeWritten().isEmpty)
        let bounds = [
            with { $0.connectionIntervalMin = 6; $0.connectionIntervalMax = 6; $0.maxLatency = 0x01F3; $0.supervisionTimeout = 0x0C80 },
            with { $0.connectionIntervalMax = 100; $0.maxLatency = 3; $0.supervisionTimeout = 101 },
            with { $0.connectionIntervalMin = 0x0C80; $0.connectionIntervalMax = 0x0C80; $0.supervisionTimeout = 0x0C80 },
        ]
        for parameters in bounds {
            let id = driver.perform(.updateConnection(connection: 0x0040, parameters))
            #expect(Self.commandBytes(driver.takeWritten()).count == 1, "\(parameters) goes out")
            driver.controller(Bytes.commandStatus(.leConnectionUpdate))
            driver.controller(Self.updateComplete(0x0040, interval: parameters.connectionIntervalMax,
                                                  latency: parameters.maxLatency, timeout: parameters.supervisionTimeout))
            #expect(driver.result(id) == .success(.connectionParameters(HostConnectionParameters(
                interval: parameters.connectionIntervalMax, latency: parameters.maxLatency, supervisionTimeout: parameters.supervisionTimeout))))
        }
    }

    @Test("Both requests on a handle the engine does not know fail with .unknownConnection, nothing sent")
    func unknownHandle() throws {
        var driver = try Self.connected()
        let update = driver.perform(.updateConnection(connection: 0x0099, Self.parameters))
        let set = driver.perform(.setDataLength(connection: 0x0099, txOctets: 251, txTime: 2120))
        #expect(driver.result(update) == .failure(.unknownConnection(0x0099)))
        #expect(driver.result(set) == .failure(.unknownConnection(0x0099)))
        #expect(driver.takeWritten().isEmpty)
    }

    @Test("A disconnection fails an accepted update, and the requests still queued, with its reason, once each")
    func disconnectionWhilePending() throws {
        var driver = try Self.connected()
        let accepted = driver.perform(.updateConnection(connection: 0x0040, Self.parameters))
        _ = driver.takeWritten()
        driver.controller(Bytes.commandStatus(.leConnectionUpdate))
        // In flight (unanswered), and queued behind it.
        let inFlight = driver.perform(.setDataLength(connection: 0x0040, txOctets: 251, txTime: 2120))
        let queued = driver.perform(.updateConnection(connection: 0x0040, Self.parameters))
        #expect(Self.commandBytes(driver.takeWritten()).map { $0.prefix(2) } == [[0x22, 0x20]], "one command at a time")

        driver.controller(Bytes.disconnectionComplete(handle: 0x0040, reason: 0x08))
        for id in [accepted, inFlight, queued] {
            #expect(driver.result(id) == .failure(.disconnected(.connectionTimeout)))
        }
        // The controller answers the command in flight for the gone link; the queued one is never sent.
        driver.controller(Bytes.commandComplete(.leSetDataLength, status: 0x02, returning: Bytes.le16(0x0040)))
        #expect(Self.commandBytes(driver.takeWritten()).isEmpty)
        driver.controller(Self.updateComplete(0x0040, interval: 0x0020, latency: 2, timeout: 0x0100))
        for id in [accepted, inFlight, queued] {
            #expect(driver.completions.filter { $0.0 == id }.count == 1, "request \(id.rawValue) completed once")
        }
        // The engine goes on: a request on a new link runs.
        driver.controller(Bytes.leConnectionComplete(handle: 0x0040, central: false, peer: Self.peer))
        _ = driver.answerCommands()
        let next = driver.perform(.setDataLength(connection: 0x0040, txOctets: 100, txTime: 1000))
        driver.controller(Bytes.commandComplete(.leSetDataLength, returning: Bytes.le16(0x0040)))
        #expect(driver.result(next) == .success(.done))
    }
}
