import BluewireCore
import BluewireHCI
import BluewireHostEngine
import Testing

/// `.readPHY`, `.setPHY` and the `.phyUpdated` event (Core Vol 4 Part E §7.8.47, §7.8.49, §7.7.65.12).
@Suite("Host engine: PHY requests")
struct EnginePHYTests {
    static let peer = BluetoothAddress(value: 0xF0_11_22_33_44_55, type: .random)

    static func connected() throws -> EngineDriver {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        driver.controller(ControllerBytes.leConnectionComplete(handle: 0x0040, central: false, peer: peer))
        _ = driver.answerCommands()
        _ = driver.takeEvents()
        return driver
    }

    @Test("LE Read PHY's return parameters complete .readPHY; a failed status fails it")
    func readPHY() throws {
        var driver = try Self.connected()
        let read = driver.perform(.readPHY(connection: 0x0040))
        let sent = driver.takeWritten()
        #expect(sent.map { Array($0.payload) } == [[0x30, 0x20, 0x02, 0x40, 0x00]], "LE Read PHY of 0x0040")
        driver.controller(ControllerBytes.commandComplete(.leReadPHY, returning: ControllerBytes.le16(0x0040) + [0x02, 0x01]))
        #expect(driver.result(read) == .success(.phy(tx: 2, rx: 1)))

        let refused = driver.perform(.readPHY(connection: 0x0040))
        _ = driver.takeWritten()
        driver.controller(ControllerBytes.commandComplete(.leReadPHY, status: 0x02, returning: ControllerBytes.le16(0x0040) + [0, 0]))
        #expect(driver.result(refused) == .failure(.command(.failed(.leReadPHY, .unknownConnectionIdentifier))))
        let unknown = driver.perform(.readPHY(connection: 0x0099))
        #expect(driver.result(unknown) == .failure(.unknownConnection(0x0099)))
    }

    @Test("LE Set PHY completes .setPHY on its Command Status; LE PHY Update Complete is a .phyUpdated event")
    func setPHY() throws {
        var driver = try Self.connected()
        let set = driver.perform(.setPHY(connection: 0x0040, tx: .le2M, rx: .le2M))
        #expect(driver.takeWritten().map { Array($0.payload) } == [[0x32, 0x20, 0x07, 0x40, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00]])
        driver.controller(ControllerBytes.commandStatus(.leSetPHY))
        #expect(driver.result(set) == .success(.done))
        #expect(driver.takeEvents().isEmpty, "nothing changed yet")
        driver.controller(ControllerBytes.event(0x3E, [0x0C, 0x00] + ControllerBytes.le16(0x0040) + [0x02, 0x02]))
        #expect(driver.takeEvents() == [.phyUpdated(connection: 0x0040, tx: 2, rx: 2)])
        // A failed update changes nothing: no event.
        driver.controller(ControllerBytes.event(0x3E, [0x0C, 0x1A] + ControllerBytes.le16(0x0040) + [0x01, 0x01]))
        #expect(driver.takeEvents().isEmpty)
    }
}
