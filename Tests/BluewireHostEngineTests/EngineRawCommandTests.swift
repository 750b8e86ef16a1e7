import BluewireCore
import BluewireHCI
import BluewireHostEngine
import Testing

/// `.command`: the application's own HCI command through the engine's procedure queue and command flow
/// (Core Vol 4 Part E §4.4), completing with the controller's answer (§7.7.14, §7.7.15).
@Suite("Host engine: raw HCI commands")
struct EngineRawCommandTests {
    static let vendor = HCIOpcode(rawValue: 0xFC01)

    static func running() throws -> EngineDriver {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        return driver
    }

    @Test("before bring-up the request is refused with .notRunning and nothing is written")
    func refusedBeforeBringUp() {
        var driver = EngineDriver()
        let id = driver.perform(.command(.readBDADDR))
        #expect(driver.result(id) == .failure(.notRunning))
        #expect(driver.written.isEmpty)
    }

    @Test("Read BD_ADDR goes out as built and completes with Command Complete's return parameters")
    func readBDADDR() throws {
        var driver = try Self.running()
        let id = driver.perform(.command(.readBDADDR))
        #expect(driver.takeWritten().map { Array($0.payload) } == [[0x09, 0x10, 0x00]])
        #expect(driver.result(id) == nil, "no answer yet")
        driver.controller(ControllerBytes.commandComplete(.readBDADDR, returning: [0x66, 0x55, 0x44, 0x33, 0x22, 0x11]))
        guard case .success(.commandResponse(let response))? = driver.result(id) else {
            Issue.record("Read BD_ADDR: \(String(describing: driver.result(id)))")
            return
        }
        guard case .complete(let complete) = response else {
            Issue.record("expected Command Complete, got \(response)")
            return
        }
        #expect(complete.commandOpcode == .readBDADDR)
        #expect(Array(complete.returnParameters) == [0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11])
        let address = try response.returnParameters(ReadBDADDRReturn.self, opcode: .readBDADDR).address
        #expect(address == BluetoothAddress(value: 0x11_22_33_44_55_66, type: .public))
    }

    @Test("a vendor opcode answered Unknown HCI Command (0x01) fails with .command(.failed) naming opcode and status")
    func vendorOpcodeRefused() throws {
        var driver = try Self.running()
        let id = driver.perform(.command(.raw(opcode: Self.vendor, parameters: [0x01, 0x02])))
        #expect(driver.takeWritten().map { Array($0.payload) } == [[0x01, 0xFC, 0x02, 0x01, 0x02]])
        driver.controller(ControllerBytes.commandComplete(Self.vendor, status: 0x01))
        #expect(driver.result(id) == .failure(.command(.failed(Self.vendor, .unknownHCICommand))))
        // The same status as Command Status (how a controller may refuse it) fails the same way.
        let again = driver.perform(.command(.raw(opcode: Self.vendor, parameters: [])))
        driver.controller(ControllerBytes.commandStatus(Self.vendor, status: 0x01))
        #expect(driver.result(again) == .failure(.command(.failed(Self.vendor, .unknownHCICommand))))
    }

    @Test("a command answered with Command Status 0x00 completes with that Command Status")
    func commandStatus() throws {
        var driver = try Self.running()
        let opcode = HCIOpcode(rawValue: 0xFC02)
        let id = driver.perform(.command(.raw(opcode: opcode, parameters: [])))
        driver.controller(ControllerBytes.commandStatus(opcode))
        #expect(driver.result(id) == .success(.commandResponse(.status(CommandStatus(status: .success, numHCICommandPackets: 1, commandOpcode: opcode)))))
    }

    @Test("an unanswered command fails with .timeout after its own timeout, counted from when it was sent; the next one goes then")
    func perRequestTimeout() throws {
        var driver = try Self.running()
        let silent = driver.perform(.command(.raw(opcode: Self.vendor, parameters: []), timeout: .milliseconds(100)))
        let next = driver.perform(.command(.readBDADDR))
        #expect(driver.takeWritten().compactMap(ControllerBytes.opcode) == [Self.vendor], "one command at a time")
        driver.advance(by: .milliseconds(99))
        #expect(driver.result(silent) == nil)
        #expect(driver.takeWritten().isEmpty)
        driver.advance(by: .milliseconds(1))
        #expect(driver.result(silent) == .failure(.command(.timeout(Self.vendor))))
        #expect(driver.takeWritten().compactMap(ControllerBytes.opcode) == [.readBDADDR])
        // Without a timeout of its own the configuration's applies (2 s by default).
        driver.advance(by: .milliseconds(1_999))
        #expect(driver.result(next) == nil)
        driver.advance(by: .milliseconds(1))
        #expect(driver.result(next) == .failure(.command(.timeout(.readBDADDR))))
    }

    @Test("a command waits for a command credit: none after Num_HCI_Command_Packets 0, sent once a NOP gives one")
    func waitsForCredit() throws {
        var driver = try Self.running()
        let first = driver.perform(.command(.readBDADDR))
        _ = driver.takeWritten()
        // Command Complete with Num_HCI_Command_Packets 0 (§7.7.14): the host may send nothing now.
        driver.controller(ControllerBytes.event(0x0E, [0x00, 0x09, 0x10, 0x00, 1, 2, 3, 4, 5, 6]))
        #expect(driver.result(first) != nil)
        let second = driver.perform(.command(.readLocalVersionInformation))
        driver.advance(by: .seconds(5))
        #expect(driver.takeWritten().isEmpty, "no credit: nothing sent")
        #expect(driver.result(second) == nil, "a command not sent does not time out")
        // A NOP Command Complete (opcode 0x0000) gives one credit back.
        driver.controller(ControllerBytes.event(0x0E, [0x01, 0x00, 0x00]))
        #expect(driver.takeWritten().compactMap(ControllerBytes.opcode) == [.readLocalVersionInformation])
    }

    @Test("a command goes out at the next command credit, beside a procedure under way rather than behind it (as BluetoothHost.send)")
    func besideProcedures() throws {
        var driver = try Self.running()
        let advertise = driver.perform(.startAdvertising(.named("engine")))
        let read = driver.perform(.command(.readBDADDR))
        // One credit: the procedure's first command has it; Read BD_ADDR takes the next one, before
        // the procedure's second command (which waits for its first to be answered).
        #expect(driver.answerCommands() == [
            .leSetAdvertisingParameters, .readBDADDR, .leSetAdvertisingData, .leSetScanResponseData, .leSetAdvertisingEnable,
        ])
        #expect(driver.result(advertise) == .success(.done))
        guard case .success(.commandResponse(.complete(let complete)))? = driver.result(read) else {
            Issue.record("Read BD_ADDR: \(String(describing: driver.result(read)))")
            return
        }
        #expect(complete.commandOpcode == .readBDADDR)
    }

    @Test("a Hardware Error fails an outstanding command instead of leaving it waiting")
    func hardwareErrorFailsIt() throws {
        var driver = try Self.running()
        let id = driver.perform(.command(.raw(opcode: Self.vendor, parameters: [])))
        driver.controller(ControllerBytes.event(0x10, [0x42]))
        guard case .failure(.command(.cancelled))? = driver.result(id) else {
            Issue.record("expected a cancelled command, got \(String(describing: driver.result(id)))")
            return
        }
    }
}

extension EngineRawCommandTests {
    @Test("the transport's end fails an unanswered raw command with .command(.cancelled) and forgets it")
    func transportEndCancelsRawCommands() throws {
        var driver = try Self.running()
        let id = driver.perform(.command(.readBDADDR))
        #expect(driver.engine.pendingRawCommands == 1)
        driver.engine.transportEnded()
        driver.drain()
        #expect(driver.result(id) == .failure(.command(.cancelled(.readBDADDR))))
        #expect(driver.engine.pendingRawCommands == 0)
    }
}
