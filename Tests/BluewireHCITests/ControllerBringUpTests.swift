import Testing
import BluewireCore
@testable import BluewireHCI

/// A scripted controller: return parameters per opcode; a missing entry is never answered.
struct ScriptedController {
    var answers: [HCIOpcode: [UInt8]]
    var statusOnly: Set<HCIOpcode> = []

    func answer(_ command: HCICommand) -> [UInt8]? {
        guard let parameters = answers[command.opcode] else { return nil }
        return commandCompletePayload(command.opcode, parameters)
    }

    /// bumble 0.0.236: HCI 5.0, company 0xFFFF, LE buffers 27 × 64 (v2 listed, no ISO), LE
    /// features 0x179ff, no extended advertising commands in its Supported_Commands.
    static func bumbleLike() -> ScriptedController {
        var octets = [UInt8](repeating: 0, count: 64)
        octets[5] = 0xC0; octets[14] = 0xA8; octets[15] = 0x02; octets[25] = 0xF7; octets[26] = 0x3F
        octets[41] = 0x20  // LE Read Buffer Size [v2]
        return ScriptedController(answers: [
            .reset: [0],
            .readLocalVersionInformation: [0, 0x09, 0, 0, 0x09, 0xFF, 0xFF, 0, 0],
            .readLocalSupportedCommands: [0] + octets,
            .readLocalSupportedFeatures: [0, 0, 0, 0, 0, 0x60, 0, 0, 0],
            .readBDADDR: [0, 0, 0, 0, 0, 0, 0],
            .leReadLocalSupportedFeatures: [0, 0xFF, 0x79, 0x01, 0, 0, 0, 0, 0],
            .leReadBufferSizeV2: [0, 27, 0, 64, 0, 0, 0],
            .setEventMask: [0], .leSetEventMask: [0], .leSetRandomAddress: [0],
        ])
    }
}

struct BringUpRun {
    var sent: [HCICommand] = []
    var outcome: ControllerBringUp.Step?
    var elapsed = TimeSpan.zero
}

/// Drives bring-up through a CommandFlow against the scripted controller, advancing a virtual
/// clock to the deadline whenever the controller stays silent.
func runBringUp(_ controller: ScriptedController, address: BluetoothAddress = .randomStatic(0x1234_5678_9ABC)) throws -> BringUpRun {
    var bringUp = ControllerBringUp(randomAddress: address)
    var flow = CommandFlow()
    var now = MonotonicInstant.zero
    var run = BringUpRun()
    var step = bringUp.start()
    for _ in 0..<32 {
        guard case .send(let command) = step else { break }
        flow.enqueue(command)
        guard let next = flow.nextToSend(now: now) else { break }
        run.sent.append(next.command)
        let completion: CommandCompletion?
        if let answer = controller.answer(next.command) {
            completion = flow.handle(try HCIEvent(decoding: answer))
        } else if let deadline = flow.nextDeadline {
            now = deadline
            completion = flow.handleTimeouts(now: now).first
        } else {
            completion = nil
        }
        guard let completion else { break }
        step = bringUp.handle(completion.result)
    }
    run.outcome = step
    run.elapsed = now - .zero
    return run
}

@Suite struct ControllerBringUpTests {
    @Test func bumbleLikeControllerBringsUpWithV2BuffersAndRandomAddress() throws {
        let address = BluetoothAddress.randomStatic(0x0000_1122_3344)
        let run = try runBringUp(.bumbleLike(), address: address)
        #expect(run.sent.map(\.opcode) == [
            .reset, .readLocalVersionInformation, .readLocalSupportedCommands, .readLocalSupportedFeatures, .readBDADDR,
            .leReadLocalSupportedFeatures, .leReadBufferSizeV2, .setEventMask, .leSetEventMask, .leSetRandomAddress,
        ])
        #expect(run.sent.last == .leSetRandomAddress(LESetRandomAddress(randomAddress: address)))
        guard case .finished(let info)? = run.outcome else {
            Issue.record("bring-up did not finish: \(String(describing: run.outcome))")
            return
        }
        #expect(info.manufacturer == 0xFFFF && info.version.hciVersion == 9)
        #expect(info.leACLDataPacketLength == 27 && info.totalNumLEACLDataPackets == 64)
        #expect(info.isoDataPacketLength == 0 && info.totalNumISODataPackets == 0)
        #expect(info.publicAddress == nil, "an all-zero BD_ADDR means no public address")
        #expect(info.randomAddress == address && info.randomAddress.randomKind == .static)
        #expect(info.supports2MPHY && info.supportsCodedPHY)
        #expect(!info.supportsExtendedAdvertising, "bumble lists no extended advertising commands")
        #expect(!info.supportsExtendedScanning)
    }

    @Test func eventMasksEnableTheEventsTheStackHandles() {
        let mask = ControllerBringUp.eventMask
        for code: UInt8 in [0x05, 0x08, 0x0C, 0x10, 0x13, 0x30, 0x3E] { #expect(mask.enables(code: code), "event 0x\(hex(code))") }
        #expect(!mask.enables(code: 0x03), "BR/EDR Connection Complete is not needed")
        let le = ControllerBringUp.leEventMask
        for sub: UInt8 in [0x01, 0x02, 0x03, 0x04, 0x05, 0x07, 0x0A, 0x0B, 0x0C, 0x0D, 0x12, 0x14] { #expect(le.enables(code: sub), "subevent 0x\(hex(sub))") }
        #expect(le.rawValue == 0x0000_0000_000A_1E5F)
        #expect(ControllerBringUp.leEventMaskWithCrypto.rawValue == 0x0000_0000_000A_1FDF, "plus 0x08 and 0x09 for controller crypto")
    }

    @Test func withoutV2BitmapUsesV1AndFallsBackToSharedBuffersWhenLEReportsZero() throws {
        var controller = ScriptedController.bumbleLike()
        var octets = [UInt8](repeating: 0, count: 64)
        octets[25] = 0x02  // LE Read Buffer Size [v1] only
        controller.answers[.readLocalSupportedCommands] = [0] + octets
        controller.answers[.leReadBufferSize] = [0, 0, 0, 0]
        controller.answers[.readBufferSize] = bytes("00 fd03 b8 0600 0100")
        let run = try runBringUp(controller)
        #expect(run.sent.contains(.leReadBufferSize) && !run.sent.contains(.leReadBufferSizeV2))
        #expect(run.sent.contains(.readBufferSize))
        guard case .finished(let info)? = run.outcome else {
            Issue.record("did not finish: \(String(describing: run.outcome))")
            return
        }
        #expect(info.leACLDataPacketLength == 1021 && info.totalNumLEACLDataPackets == 6)
        #expect(info.isoDataPacketLength == nil)
    }

    @Test func extendedAdvertisingControllerReadsAdvertisingLimits() throws {
        var controller = ScriptedController.bumbleLike()
        var commands = [UInt8](repeating: 0, count: 64)
        commands[25] = 0x02; commands[36] = 0xFF; commands[37] = 0xE3
        controller.answers[.readLocalSupportedCommands] = [0] + commands
        controller.answers[.leReadBufferSize] = [0, 0xFB, 0, 8]
        controller.answers[.leReadMaximumAdvertisingDataLength] = [0, 0xC0, 0]
        controller.answers[.leReadNumberOfSupportedAdvertisingSets] = [0, 8]
        controller.answers[.readBDADDR] = bytes("00 adadc2b2ec74")
        let run = try runBringUp(controller)
        guard case .finished(let info)? = run.outcome else {
            Issue.record("did not finish: \(String(describing: run.outcome))")
            return
        }
        #expect(info.supportsExtendedAdvertising && info.supportsExtendedScanning && info.supportsExtendedCreateConnection)
        #expect(info.maxAdvertisingDataLength == 192 && info.numberOfAdvertisingSets == 8)
        #expect(info.publicAddress?.description == "74:EC:B2:C2:AD:AD")
    }

    @Test func v2BufferSizeRejectedFallsBackToV1() throws {
        var controller = ScriptedController.bumbleLike()
        controller.answers[.leReadBufferSizeV2] = [0x01]
        controller.answers[.leReadBufferSize] = [0, 27, 0, 4]
        let run = try runBringUp(controller)
        #expect(run.sent.map(\.opcode).suffix(5) == [.leReadBufferSizeV2, .leReadBufferSize, .setEventMask, .leSetEventMask, .leSetRandomAddress])
        guard case .finished(let info)? = run.outcome else { Issue.record("did not finish"); return }
        #expect(info.totalNumLEACLDataPackets == 4)
    }

    @Test func silentControllerFailsAtResetAfterTheTimeout() throws {
        let run = try runBringUp(ScriptedController(answers: [:]))
        #expect(run.outcome == .failed(BringUpError(opcode: .reset, error: .timeout(.reset))))
        #expect(run.elapsed == .seconds(2))
    }

    @Test func refusedEventMaskFailsNamingCommandAndStatus() throws {
        var controller = ScriptedController.bumbleLike()
        controller.answers[.leSetEventMask] = [0x12]
        let run = try runBringUp(controller)
        #expect(run.outcome == .failed(BringUpError(opcode: .leSetEventMask, error: .failed(.leSetEventMask, .invalidHCICommandParameters))))
        #expect(BringUpError(opcode: .leSetEventMask, error: .failed(.leSetEventMask, .invalidHCICommandParameters)).description
            == "controller bring-up failed at LE Set Event Mask (0x2001): LE Set Event Mask (0x2001) failed: Invalid HCI Command Parameters (0x12)")
    }

    @Test func truncatedVersionAnswerIsMalformedResponse() throws {
        var controller = ScriptedController.bumbleLike()
        controller.answers[.readLocalVersionInformation] = [0, 9]
        let run = try runBringUp(controller)
        guard case .failed(let error)? = run.outcome, case .malformedResponse(let opcode, _) = error.error else {
            Issue.record("expected malformed response, got \(String(describing: run.outcome))")
            return
        }
        #expect(opcode == .readLocalVersionInformation)
    }
}
