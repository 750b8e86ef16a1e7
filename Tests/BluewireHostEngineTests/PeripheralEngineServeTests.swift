import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import HostTestSupport
import Testing

/// What an application serving a database (`bluewire serve --db`) needs from the engine as peripheral:
/// the reads it served and the requests it refused as events, advertising paused at a maximum number
/// of centrals, and the advertising layout it chose.
@Suite("Host engine: peripheral serving events")
struct PeripheralEngineServeTests {
    static let central = BluetoothAddress(value: 0xF0_11_22_33_44_55, type: .random)
    static let second = BluetoothAddress(value: 0xF0_11_22_33_44_66, type: .random)

    static func advertising(maximumConnections: Int?) throws -> EngineDriver {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        driver.engine.setDatabase(try TestDatabase.make())
        let advertisement = HostAdvertisement(
            data: [.completeLocalName("serve")], advertisesWhileConnected: true, maximumConnections: maximumConnections)
        _ = driver.perform(.startAdvertising(advertisement))
        _ = driver.answerCommands()
        #expect(driver.takeEvents() == [.advertisingStarted])
        return driver
    }

    @Test("reads (Read, Read Blob, Read By Type of a value type) are reported with what was sent")
    func readsAreReported() throws {
        var driver = try Self.advertising(maximumConnections: nil)
        driver.controller(ControllerBytes.leConnectionComplete(handle: 0x0040, central: false, peer: Self.central))
        _ = driver.answerCommands()
        _ = driver.takeEvents()
        driver.controller(ControllerBytes.att(handle: 0x0040, [0x0C, 0x06, 0x00, 0x16, 0x00]))  // Read Blob at 22
        #expect(driver.takeATT().first?.first == 0x0D)
        #expect(driver.takeEvents() == [.serverRead(
            connection: 0x0040, handle: TestDatabase.longHandle, offset: 22, value: Array(TestDatabase.longValue[22..<44]))])
        // Read By Type of the characteristic's UUID (a value, not a declaration).
        driver.controller(ControllerBytes.att(handle: 0x0040, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0xF1, 0xFF]))
        #expect(driver.takeATT().first?.first == 0x09)
        #expect(driver.takeEvents() == [.serverRead(connection: 0x0040, handle: TestDatabase.valueHandle, offset: 0, value: [0x2A])])
        // Discovery (Read By Type of the characteristic declaration) is not a read of a value.
        driver.controller(ControllerBytes.att(handle: 0x0040, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28]))
        #expect(driver.takeATT().first?.first == 0x09)
        #expect(driver.takeEvents().isEmpty)
    }

    @Test("an Error Response is reported as a refusal, except Attribute Not Found (how discovery ends)")
    func refusalsAreReported() throws {
        var driver = try Self.advertising(maximumConnections: nil)
        driver.controller(ControllerBytes.leConnectionComplete(handle: 0x0040, central: false, peer: Self.central))
        _ = driver.answerCommands()
        _ = driver.takeEvents()
        driver.controller(ControllerBytes.att(handle: 0x0040, [0x0A, 0x99, 0x00]))  // Read of a handle that is not there
        #expect(driver.takeATT() == [[0x01, 0x0A, 0x99, 0x00, 0x01]])
        #expect(driver.takeEvents() == [.serverRequestRefused(
            connection: 0x0040, request: .readRequest, handle: 0x0099, error: .invalidHandle)])
        driver.controller(ControllerBytes.att(handle: 0x0040, [0x08, 0x20, 0x00, 0xFF, 0xFF, 0x03, 0x28]))  // past the last
        #expect(driver.takeATT() == [[0x01, 0x08, 0x20, 0x00, 0x0A]])
        #expect(driver.takeEvents().isEmpty)
    }

    @Test("advertising while connected pauses at maximumConnections and resumes when a central leaves")
    func maximumConnections() throws {
        var driver = try Self.advertising(maximumConnections: 2)
        // The first central: one more may come, so advertising is enabled again at once.
        driver.controller(ControllerBytes.leConnectionComplete(handle: 0x0040, central: false, peer: Self.central))
        #expect(driver.answerCommands().contains(.leSetAdvertisingEnable))
        #expect(driver.takeEvents().contains(.advertisingStarted))
        // The second: the maximum, advertising stays off.
        driver.controller(ControllerBytes.leConnectionComplete(handle: 0x0041, central: false, peer: Self.second))
        #expect(!driver.answerCommands().contains(.leSetAdvertisingEnable))
        let events = driver.takeEvents()
        #expect(events.last == .advertisingStopped && !events.contains(.advertisingStarted), "\(events)")
        // One leaves: advertising again.
        driver.controller(ControllerBytes.disconnectionComplete(handle: 0x0040, reason: 0x13))
        #expect(driver.answerCommands() == [.leSetAdvertisingEnable])
        #expect(driver.takeEvents() == [.disconnected(handle: 0x0040, reason: .remoteUserTerminatedConnection), .advertisingStarted])
    }

    @Test("the advertising layout says the command set and the octets sent")
    func layout() throws {
        let driver = try Self.advertising(maximumConnections: nil)
        let layout = try #require(driver.engine.advertisingLayout)
        #expect(layout.kind == .legacy)
        #expect(layout.advertisingData == [0x06, 0x09] + Array("serve".utf8))
        #expect(layout.scanResponseData.isEmpty)
    }
}
