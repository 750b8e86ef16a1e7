import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import HostTestSupport
import Testing

/// `GATTClientRequest.writeLong`: Write Long Characteristic Values (Core Vol 3 Part G §4.9.4) against
/// BluewireGATT's `GATTServer`, answering the engine's PDUs byte for byte at the default ATT_MTU (23).
@Suite("Host engine: write long characteristic values")
struct CentralEngineLongWriteTests {
    static let peripheral = BluetoothAddress(value: 0xC0_AA_BB_CC_DD_EF, type: .random)
    static let link: UInt16 = 0x0001

    /// A connected engine and the peer's server (serving `TestDatabase` unless told otherwise).
    static func connected(database: GATTDatabase? = nil) throws -> (EngineDriver, GATTServer) {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        var peer = GATTServer(database: try database ?? TestDatabase.make())
        peer.connect(link)
        driver.perform(.connect(peripheral, LEConnectionParameters()))
        driver.answerCommands()
        driver.controller(ControllerBytes.leConnectionComplete(handle: link, central: true, peer: peripheral))
        driver.answerCommands()
        // The handles are known (TestDatabase): the peer's machine takes them as discovered.
        driver.perform(.gatt(connection: link, .cachedDiscovery))
        return (driver, peer)
    }

    /// Answers the engine's ATT requests with the server until it sends none; the PDUs' opcodes.
    static func exchange(_ driver: inout EngineDriver, _ peer: inout GATTServer) -> [UInt8] {
        var opcodes: [UInt8] = []
        while true {
            let pdus = driver.takeATT()
            guard !pdus.isEmpty else { break }
            for pdu in pdus {
                opcodes.append(pdu.first ?? 0)
                if let answer = peer.handle(pdu, from: link) {
                    driver.controller(ControllerBytes.att(handle: link, answer))
                }
            }
        }
        return opcodes
    }

    @Test("a 60-octet value goes as four Prepare Write Requests of ATT_MTU − 5 octets and one Execute Write; a read gives it back")
    func writesTheWholeValue() throws {
        var (driver, peer) = try Self.connected()
        let value = (0..<60).map { UInt8($0 &* 3) }
        let write = driver.perform(.gatt(connection: Self.link, .writeLong(handle: TestDatabase.valueHandle, value: value)))
        let opcodes = Self.exchange(&driver, &peer)
        // 18 + 18 + 18 + 6 octets (Core Vol 3 Part F §3.4.6.1: Prepare Write carries ATT_MTU − 5).
        #expect(opcodes == [0x16, 0x16, 0x16, 0x16, 0x18])
        #expect(driver.result(write) == .success(.done))
        let read = driver.perform(.gatt(connection: Self.link, .readLong(handle: TestDatabase.valueHandle)))
        _ = Self.exchange(&driver, &peer)
        #expect(driver.result(read) == .success(.value(value)))
    }

    @Test("a refused Prepare Write cancels the server's queue (Execute Write, flags 0) and fails with the server's error")
    func refusalCancelsTheQueue() throws {
        var (driver, peer) = try Self.connected()
        // 0xFFF2 is read-only: the server answers Write Not Permitted.
        let write = driver.perform(.gatt(connection: Self.link, .writeLong(handle: TestDatabase.longHandle, value: Array(repeating: 7, count: 40))))
        var sent: [[UInt8]] = []
        while true {
            let pdus = driver.takeATT()
            guard !pdus.isEmpty else { break }
            for pdu in pdus {
                sent.append(pdu)
                if let answer = peer.handle(pdu, from: Self.link) { driver.controller(ControllerBytes.att(handle: Self.link, answer)) }
            }
        }
        #expect(sent.map { $0.first } == [0x16, 0x18])
        #expect(sent.last == [0x18, 0x00], "Execute Write Request, cancel all prepared writes")
        #expect(driver.result(write) == .failure(.gatt(.errorResponse(.writeNotPermitted, requestOpcode: .prepareWriteRequest, handle: TestDatabase.longHandle))))
    }
}
