import BluewireCore
import BluewireHCI
import BluewireHostEngine
import Testing

/// LE Advertising Set Terminated (Core Vol 4 Part E §7.7.65.18) as a `.advertisingSetTerminated` event,
/// next to the engine's own handling of it, which stays as it was.
@Suite("Host engine: LE Advertising Set Terminated")
struct EngineAdvertisingSetTerminatedTests {
    static let central = BluetoothAddress(value: 0xC1_22_33_44_55_66, type: .random)

    /// The subevent 0x12: Status, Advertising_Handle, Connection_Handle, Num_Completed_Extended_Advertising_Events.
    static func terminated(status: UInt8, handle: UInt8 = 0, connection: UInt16 = 0, completed: UInt8 = 0) -> HCIPacket {
        ControllerBytes.event(0x3E, [0x12, status, handle] + ControllerBytes.le16(connection) + [completed])
    }

    static func advertising(_ commandSet: HostAdvertisement.CommandSet) throws -> EngineDriver {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        var advertisement = HostAdvertisement.named("engine")
        advertisement.commandSet = commandSet
        let id = driver.perform(.startAdvertising(advertisement))
        driver.answerCommands()
        #expect(driver.result(id) == .success(.done))
        #expect(driver.engine.isAdvertising)
        _ = driver.takeEvents()
        return driver
    }

    @Test("an extended set that timed out (0x3C) is reported with its fields, then .advertisingStopped as before")
    func advertisingTimeout() throws {
        var driver = try Self.advertising(.extended)
        driver.controller(Self.terminated(status: 0x3C, handle: 0, connection: 0, completed: 7))
        #expect(driver.takeEvents() == [
            .advertisingSetTerminated(handle: 0, status: HCIStatus(0x3C), connectionHandle: 0, numCompletedEvents: 7),
            .advertisingStopped,
        ])
        #expect(!driver.engine.isAdvertising)
    }

    @Test("a set ended by a connection is reported with the link's handle and nothing else")
    func endedByConnection() throws {
        var driver = try Self.advertising(.extended)
        driver.controller(ControllerBytes.leConnectionComplete(handle: 0x0040, central: false, peer: Self.central))
        driver.answerCommands()
        _ = driver.takeEvents()
        let advertising = driver.engine.isAdvertising
        driver.controller(Self.terminated(status: 0x00, handle: 0, connection: 0x0040, completed: 0))
        #expect(driver.takeEvents() == [
            .advertisingSetTerminated(handle: 0, status: .success, connectionHandle: 0x0040, numCompletedEvents: 0),
        ])
        #expect(driver.engine.isAdvertising == advertising, "a successful end changes no advertising state")
    }

    @Test("with legacy advertising the event is still reported, and advertising is left enabled as before")
    func legacyAdvertisingUntouched() throws {
        var driver = try Self.advertising(.legacy)
        driver.controller(Self.terminated(status: 0x43, handle: 3, connection: 0x0EFF, completed: 255))
        #expect(driver.takeEvents() == [
            .advertisingSetTerminated(handle: 3, status: HCIStatus(0x43), connectionHandle: 0x0EFF, numCompletedEvents: 255),
        ])
        #expect(driver.engine.isAdvertising)
    }
}
