import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import HostTestSupport
import Testing

/// What the engine's GATT server holds per central (HostEngine+ServerState), the server limits an
/// application gives with its database, and how `.indicate` ends when a value cannot be sent: the
/// central's queue full, or the central unsubscribed while its value waited.
@Suite("Host engine: the server's state per central")
struct EngineServerStateTests {
    static let peer = BluetoothAddress(value: 0xF0_11_22_33_44_55, type: .random)
    static let link: UInt16 = 0x0040

    /// A central connected to the engine's server (with `configuration`), subscribed to indications.
    static func served(configuration: GATTServerConfiguration? = nil) throws -> EngineDriver {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        driver.engine.setDatabase(try TestDatabase.make(), configuration: configuration)
        driver.controller(ControllerBytes.leConnectionComplete(handle: link, central: false, peer: peer))
        driver.controller(ControllerBytes.att(handle: link, [0x12, 0x04, 0x00, 0x02, 0x00]))
        _ = driver.takeWritten()
        return driver
    }

    @Test("the server's MTU, prepared writes, indications and subscriptions per central, and its connections")
    func accessorsFollowTheServer() throws {
        var driver = try Self.served()
        #expect(driver.engine.serverConnectionCount == 1)
        #expect(driver.engine.serverMTU(connection: Self.link) == 23)
        #expect(driver.engine.clientConfigurationCount(connection: Self.link) == 1, "the CCCD it wrote")
        #expect(driver.engine.preparedWrites(connection: Self.link) == 0)
        // Prepare Write Request of handle 3, offset 0, one octet (Core Vol 3 Part F §3.4.6.1).
        driver.controller(ControllerBytes.att(handle: Self.link, [0x16, 0x03, 0x00, 0x00, 0x00, 0x07]))
        #expect(driver.engine.preparedWrites(connection: Self.link) == 1)
        driver.controller(ControllerBytes.att(handle: Self.link, [0x02, 0x40, 0x00]))
        #expect(driver.engine.serverMTU(connection: Self.link) == 64, "after the central's Exchange MTU Request")

        driver.perform(.indicate(valueHandle: TestDatabase.valueHandle, value: [1], connection: Self.link))
        driver.perform(.indicate(valueHandle: TestDatabase.valueHandle, value: [2], connection: Self.link))
        #expect(driver.engine.indicationOutstanding(connection: Self.link))
        #expect(driver.engine.queuedIndications(connection: Self.link) == 1)
        driver.controller(ControllerBytes.att(handle: Self.link, [0x1E]))
        #expect(driver.engine.indicationOutstanding(connection: Self.link))
        #expect(driver.engine.queuedIndications(connection: Self.link) == 0)

        driver.controller(ControllerBytes.disconnectionComplete(handle: Self.link, reason: 0x13))
        #expect(driver.engine.serverConnectionCount == 0, "a link's end leaves nothing in the server")
        #expect(!driver.engine.indicationOutstanding(connection: Self.link))
        #expect(driver.engine.clientConfigurationCount(connection: Self.link) == 0)
    }

    @Test("the server's configuration limits the indications queued; one more fails at once, reported dropped")
    func aFullIndicationQueueFailsTheRequest() throws {
        var driver = try Self.served(configuration: GATTServerConfiguration(serverMTU: 247, maximumQueuedIndications: 1))
        let first = driver.perform(.indicate(valueHandle: TestDatabase.valueHandle, value: [1], connection: Self.link))
        let second = driver.perform(.indicate(valueHandle: TestDatabase.valueHandle, value: [2], connection: Self.link))
        _ = driver.takeEvents()
        let third = driver.perform(.indicate(valueHandle: TestDatabase.valueHandle, value: [3], connection: Self.link))
        #expect(driver.result(third) == .failure(.indicationQueueFull))
        #expect(driver.takeEvents() == [.server(.indicationDropped(connection: Self.link, handle: TestDatabase.valueHandle))])
        #expect(driver.result(first) == nil && driver.result(second) == nil)
        driver.controller(ControllerBytes.att(handle: Self.link, [0x1E]))
        #expect(driver.result(first) == .success(.done))
        driver.controller(ControllerBytes.att(handle: Self.link, [0x1E]))
        #expect(driver.result(second) == .success(.done), "the dropped value took no place in line")
        #expect(driver.takeATT() == [[0x1D, 0x03, 0x00, 0x01], [0x1D, 0x03, 0x00, 0x02]])
    }

    @Test("a value queued for a central that unsubscribes is not sent: its request fails, the next goes out")
    func anUnsubscribedCentralsQueuedValueFails() throws {
        var driver = try Self.served()
        let first = driver.perform(.indicate(valueHandle: TestDatabase.valueHandle, value: [1], connection: Self.link))
        let second = driver.perform(.indicate(valueHandle: TestDatabase.valueHandle, value: [2], connection: Self.link))
        #expect(driver.takeATT() == [[0x1D, 0x03, 0x00, 0x01]])
        // The central unsubscribes, then confirms the outstanding indication.
        driver.controller(ControllerBytes.att(handle: Self.link, [0x12, 0x04, 0x00, 0x00, 0x00]))
        driver.controller(ControllerBytes.att(handle: Self.link, [0x1E]))
        #expect(driver.result(first) == .success(.done))
        #expect(driver.result(second) == .failure(.unsubscribed))
        #expect(driver.takeATT() == [[0x13]], "the Write Response only: the queued value was not sent")
        let unsubscribed = driver.perform(.indicate(valueHandle: TestDatabase.valueHandle, value: [3], connection: Self.link))
        #expect(driver.result(unsubscribed) == .failure(.server(.notSupportedByCharacteristic(TestDatabase.valueHandle))))
    }
}
