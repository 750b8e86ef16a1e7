import Testing
import BluewireCore
@testable import BluewireHCI

@Suite struct CommandFlowTests {
    let t0 = MonotonicInstant(microseconds: 1_000_000)

    func event(_ payload: [UInt8]) throws -> HCIEvent { try HCIEvent(decoding: payload) }

    @Test func startsWithOneCreditAndQueuesTheRest() throws {
        var flow = CommandFlow()
        let reset = flow.enqueue(.reset)
        flow.enqueue(.readLocalVersionInformation)
        #expect(flow.nextToSend(now: t0)?.id == reset)
        #expect(flow.nextToSend(now: t0) == nil, "second command must wait for credit")
        #expect(flow.queuedCount == 1)
        let done = flow.handle(try event(eventPayload("040e0401030c00")))
        #expect(done?.id == reset)
        #expect(done?.result == .success(.complete(CommandComplete(numHCICommandPackets: 1, commandOpcode: .reset, returnParameters: [0][...]))))
        #expect(flow.nextToSend(now: t0)?.command == .readLocalVersionInformation)
    }

    @Test func severalCommandsInFlightWhenControllerAllowsAndAnswersMatchByOpcode() throws {
        var flow = CommandFlow()
        flow.enqueue(.reset)
        _ = flow.nextToSend(now: t0)
        _ = flow.handle(try event(commandCompletePayload(.reset, [0], credits: 3)))
        let a = flow.enqueue(.readBDADDR)
        let b = flow.enqueue(.leReadBufferSize)
        let c = flow.enqueue(.leCreateConnection(LECreateConnection(peerAddress: BluetoothAddress(value: 1, type: .random))))
        #expect(flow.nextToSend(now: t0)?.id == a)
        #expect(flow.nextToSend(now: t0)?.id == b)
        #expect(flow.nextToSend(now: t0)?.id == c)
        #expect(flow.credits == 0)
        // Answers arrive out of order.
        #expect(flow.handle(try event(commandStatusPayload(.leCreateConnection, credits: 1)))?.id == c)
        #expect(flow.handle(try event(commandCompletePayload(.leReadBufferSize, [0, 27, 0, 64])))?.id == b)
        #expect(flow.handle(try event(commandCompletePayload(.readBDADDR, [0, 1, 2, 3, 4, 5, 6])))?.id == a)
        #expect(flow.inFlight.isEmpty)
    }

    @Test func nonZeroStatusFailsNamingOpcodeAndStatus() throws {
        var flow = CommandFlow()
        flow.enqueue(.leSetAdvertisingEnable(LESetAdvertisingEnable(enable: true)))
        _ = flow.nextToSend(now: t0)
        let done = try #require(flow.handle(try event(commandCompletePayload(.leSetAdvertisingEnable, [0x0C]))))
        #expect(done.result == .failure(.failed(.leSetAdvertisingEnable, .commandDisallowed)))
        #expect(CommandError.failed(.leSetAdvertisingEnable, .commandDisallowed).description
            == "LE Set Advertising Enable (0x200a) failed: Command Disallowed (0x0c)")
    }

    @Test func commandStatusFailureIsAnError() throws {
        var flow = CommandFlow()
        flow.enqueue(.disconnect(Disconnect(connectionHandle: 9)))
        _ = flow.nextToSend(now: t0)
        let done = flow.handle(try event(commandStatusPayload(.disconnect, status: 0x02)))
        #expect(done?.result == .failure(.failed(.disconnect, .unknownConnectionIdentifier)))
    }

    @Test func bumbleStatusOnlySetDataLengthAnswerIsATypedFailure() throws {
        var flow = CommandFlow()
        flow.enqueue(.leSetDataLength(LESetDataLength(connectionHandle: 1)))
        _ = flow.nextToSend(now: t0)
        let done = try #require(flow.handle(try event(eventPayload("040e0401222001"))))
        #expect(done.result == .failure(.failed(.leSetDataLength, .unknownHCICommand)))
        #expect(throws: CommandError.failed(.leSetDataLength, .unknownHCICommand)) {
            _ = try done.returnParameters(ConnectionHandleReturnParameters.self)
        }
    }

    @Test func successWithShortReturnParametersIsMalformedResponse() throws {
        var flow = CommandFlow()
        flow.enqueue(.readLocalVersionInformation)
        _ = flow.nextToSend(now: t0)
        let done = try #require(flow.handle(try event(commandCompletePayload(.readLocalVersionInformation, [0, 9]))))
        #expect(throws: CommandError.malformedResponse(.readLocalVersionInformation,
            DecodeError(.truncated(needed: 2, available: 0), layer: "hci", field: "HCI_Subversion", offset: 7))) {
            _ = try done.returnParameters(LocalVersionInformation.self)
        }
    }

    @Test func unansweredCommandTimesOutAtItsDeadlineAndCreditReturns() throws {
        var flow = CommandFlow()
        let vendor = flow.enqueue(.raw(opcode: HCIOpcode(rawValue: 0xFC01), parameters: []))
        flow.enqueue(.reset)
        _ = flow.nextToSend(now: t0)
        #expect(flow.nextDeadline == t0 + .seconds(2))
        #expect(flow.handleTimeouts(now: t0 + .milliseconds(1999)).isEmpty)
        let expired = flow.handleTimeouts(now: t0 + .seconds(2))
        #expect(expired.map(\.id) == [vendor])
        #expect(expired.first?.result == .failure(.timeout(HCIOpcode(rawValue: 0xFC01))))
        #expect(flow.nextDeadline == nil)
        #expect(flow.nextToSend(now: t0 + .seconds(2))?.command == .reset)
    }

    @Test func perCommandTimeoutOverridesDefault() {
        var flow = CommandFlow(defaultTimeout: .seconds(5))
        flow.enqueue(.reset, timeout: .milliseconds(100))
        _ = flow.nextToSend(now: t0)
        #expect(flow.nextDeadline == t0 + .milliseconds(100))
    }

    @Test func answersMatchingNothingOnlyUpdateCredits() throws {
        var flow = CommandFlow()
        #expect(flow.handle(try event(commandCompletePayload(HCIOpcode(rawValue: 0), [], credits: 2))) == nil)
        #expect(flow.credits == 2)
        #expect(flow.handle(try event(commandCompletePayload(.reset, [0], credits: 0))) == nil)
        #expect(flow.credits == 0)
        flow.enqueue(.reset)
        #expect(flow.nextToSend(now: t0) == nil, "zero credits stop the host")
    }

    @Test func cancelAllFailsEverythingAndRestoresOneCredit() {
        var flow = CommandFlow()
        flow.enqueue(.reset)
        flow.enqueue(.readBDADDR)
        _ = flow.nextToSend(now: t0)
        let cancelled = flow.cancelAll()
        #expect(cancelled.map(\.result) == [.failure(.cancelled(.reset)), .failure(.cancelled(.readBDADDR))])
        #expect(flow.credits == 1 && flow.queuedCount == 0 && flow.inFlight.isEmpty)
    }
}
