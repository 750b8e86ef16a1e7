import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import Testing

/// `.startScan(..., duration:)`: the engine ends the scan itself, on its own timer (so a replay runs it
/// in the capture's time and these tests move it by hand).
@Suite("Host engine: a scan with a duration")
struct EngineScanDurationTests {
    static let peripheral = BluetoothAddress(value: 0xC0_AA_BB_CC_DD_EE, type: .random)

    static func transition(_ from: ConnectionState, _ trigger: ConnectionTrigger, _ to: ConnectionState) -> HostEngineEvent {
        .scanStateChanged(ConnectionTransition(from: from, trigger: trigger, to: to, handledBy: .state), cause: nil)
    }

    static func enables(_ driver: EngineDriver) -> [[UInt8]] {
        driver.written.filter { ControllerBytes.opcode($0) == .leSetScanEnable }.map { Array($0.payload.suffix(2)) }
    }

    @Test("the duration's deadline is the engine's next; when it passes, Scan Enable off, then ScanCompleted and scanStopped")
    func durationEndsTheScan() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        let start = driver.perform(.startScan(ScanParameters(), filter: AdvertisingFilter(), duration: .seconds(2)))
        #expect(driver.engine.nextDeadline == driver.now + .seconds(2), "deadline: \(String(describing: driver.engine.nextDeadline))")
        #expect(driver.answerCommands() == [.leSetScanParameters, .leSetScanEnable])
        #expect(driver.result(start) == .success(.done))
        driver.controller(ControllerBytes.advertisingReport(Self.peripheral, data: [0x05, 0x09] + Array("peer".utf8)))
        _ = driver.takeEvents()

        // Just before the deadline nothing is sent.
        driver.advance(by: .microseconds(1_999_999))
        #expect(driver.takeWritten().isEmpty)
        #expect(driver.engine.scanState == .disconnected(.scanning))

        driver.advance(by: .microseconds(1))
        // Still scanning until the controller confirmed the disable.
        #expect(driver.engine.scanState == .disconnected(.scanning))
        #expect(driver.answerCommands() == [.leSetScanEnable])
        #expect(Self.enables(driver) == [[0x01, 0x00], [0x00, 0x00]])
        #expect(driver.takeEvents() == [
            Self.transition(.disconnected(.scanning), .scanCompleted, .initial),
            .scanStopped,
        ])
        #expect(!driver.engine.isScanning)
        #expect(driver.engine.scanState == .initial)
        // The duration fired once: time passing sends nothing more.
        driver.advance(by: .seconds(10))
        #expect(driver.takeWritten().isEmpty)
    }

    @Test("reports that arrive after the duration's disable was sent are still delivered until it is answered")
    func reportsUntilTheDisableIsAnswered() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        driver.perform(.startScan(ScanParameters(), filter: AdvertisingFilter(), duration: .milliseconds(500)))
        driver.answerCommands()
        _ = driver.takeEvents()
        driver.advance(by: .milliseconds(500))
        let disable = driver.takeWritten()
        #expect(disable.compactMap(ControllerBytes.opcode) == [.leSetScanEnable])
        driver.controller(ControllerBytes.advertisingReport(Self.peripheral, data: [0x05, 0x09] + Array("late".utf8)))
        guard case .deviceFound(let device)? = driver.takeEvents().first else {
            Issue.record("no device for the report before the disable's answer")
            return
        }
        #expect(device.name == "late")
        for packet in disable { if let answer = ControllerBytes.answer(packet) { driver.controller(answer) } }
        #expect(driver.takeEvents() == [Self.transition(.disconnected(.scanning), .scanCompleted, .initial), .scanStopped])
    }

    @Test("a stop asked before the duration is over ends the scan with StopScan, and the duration does nothing after")
    func stopBeforeTheDuration() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        driver.perform(.startScan(ScanParameters(), filter: AdvertisingFilter(), duration: .seconds(5)))
        driver.answerCommands()
        let stop = driver.perform(.stopScan)
        #expect(driver.answerCommands() == [.leSetScanEnable])
        #expect(driver.result(stop) == .success(.done))
        #expect(driver.engine.nextDeadline == nil, "no scan, no scan deadline: \(String(describing: driver.engine.nextDeadline))")
        driver.advance(by: .seconds(10))
        #expect(driver.takeWritten().isEmpty, "nothing sent when the old duration passes")
        #expect(driver.takeEvents().filter { $0 == .scanStopped }.count == 1)
        #expect(Self.enables(driver) == [[0x01, 0x00], [0x00, 0x00]])
    }

    @Test("a new scan asked while the duration's disable is queued runs after it: disable, parameters, enable; the machine goes through Initial on ScanCompleted")
    func scanAgainRightAfterTheDuration() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        driver.perform(.startScan(ScanParameters(), filter: AdvertisingFilter(), duration: .seconds(1)))
        driver.answerCommands()
        _ = driver.takeEvents()
        driver.advance(by: .seconds(1))
        // The disable is on the wire and not answered yet: the next scan is asked for now.
        let again = driver.perform(.startScan(ScanParameters(), filter: AdvertisingFilter()))
        #expect(driver.answerCommands() == [.leSetScanEnable, .leSetScanParameters, .leSetScanEnable])
        #expect(Self.enables(driver) == [[0x01, 0x00], [0x00, 0x00], [0x01, 0x00]], "the controller ends up scanning")
        #expect(driver.result(again) == .success(.done))
        #expect(driver.takeEvents() == [
            Self.transition(.disconnected(.scanning), .scanCompleted, .initial),
            Self.transition(.initial, .startScan, .disconnected(.scanning)),
        ])
        #expect(driver.engine.isScanning)
        #expect(driver.engine.scanState == .disconnected(.scanning))
        // The second scan has no duration: nothing is due.
        #expect(driver.engine.nextDeadline == nil, "\(String(describing: driver.engine.nextDeadline))")
    }
}
