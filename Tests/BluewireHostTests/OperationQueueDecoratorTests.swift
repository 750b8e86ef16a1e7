import Bluewire
import BluewireATT
import BluewireGATT
import BluewireHCI
import BluewireTesting
import Testing

/// Logs its name around every operation it wraps.
private struct LoggingDecorator: OperationQueueDecorator {
    let name: String
    let log: EventLog<String>

    func decorate<Operation: GATTOperation>(_ operation: Operation) -> any GATTOperation<Operation.Result, Operation.Failure> {
        Logged(wrapped: operation, name: name, log: log)
    }

    struct Logged<Wrapped: GATTOperation>: GATTOperation {
        let wrapped: Wrapped
        let name: String
        let log: EventLog<String>
        var requirements: OperationRequirements { wrapped.requirements }
        func execute(on context: any ATTRequestPerformer) async throws(Wrapped.Failure) -> Wrapped.Result {
            log.append(name)
            return try await wrapped.execute(on: context)
        }
    }
}

/// Reads a handle and logs that it ran.
private struct LoggedRead: GATTOperation {
    let handle: UInt16
    let log: EventLog<String>
    var requirements: OperationRequirements = []
    func execute(on context: any ATTRequestPerformer) async throws(GATTError) -> [UInt8] {
        log.append("read \(handle)")
        return try await context.perform(ReadCharacteristicValue(handle: handle))
    }
}

private actor FakeEstablisher: ConnectionEstablisher {
    let log: EventLog<String>
    var connected = false
    init(log: EventLog<String>) { self.log = log }
    func ensureConnected() async throws(OperationError) {
        if !connected {
            log.append("connect")
            connected = true
        }
    }
    func drop() { connected = false }
}

private struct FakeAuthorizer: OperationAuthorizer {
    let log: EventLog<String>
    func authorize(for requirements: OperationRequirements) async throws(OperationError) {
        log.append(requirements.contains(.authorization) ? "authorize" : "authorize?")
    }
}

@Suite("Operation queue: timeout, retry and queue decorators")
struct OperationQueueDecoratorTests {
    @Test("A timeout fires after exactly its duration on the injected clock and cancels the request")
    func timeoutOnTestClock() async throws {
        let clock = TestClock()
        let performer = ScriptedATTPerformer(values: [1: [1], 2: [2]])
        let gate = Gate()
        await performer.setGate(gate, for: 1)
        let queue = GATTOperationQueue(performer: performer)
        let operation = await queue.submit(GATTOperations.read(handle: 1).timeout(.seconds(30), clock: clock))
        await gate.arrived.wait()
        await clock.waitForSleepers(count: 1)

        await clock.advance(by: .seconds(29))
        #expect(!operation.isCompleted, "timed out early")
        await clock.advance(by: .seconds(1))
        await #expect(throws: GATTError.timedOut(.seconds(30))) { try await operation.value }
        #expect(try await queue.run(GATTOperations.read(handle: 2)) == [2])
        #expect(await performer.events.contains(.cancelled(.readRequest(handle: 1))))
    }

    @Test("An operation that finishes in time returns its value and leaves no timer behind")
    func timeoutNotReached() async throws {
        let clock = TestClock()
        let performer = ScriptedATTPerformer(values: [1: [1]])
        let queue = GATTOperationQueue(performer: performer)
        #expect(try await queue.run(GATTOperations.read(handle: 1).timeout(.seconds(30), clock: clock)) == [1])
        #expect(clock.sleeperCount == 0)
    }

    @Test("Retry tries again while the policy says so, up to the number of attempts")
    func retryUntilSuccess() async throws {
        let performer = ScriptedATTPerformer(values: [1: [1]])
        let queue = GATTOperationQueue(performer: performer)
        let attempts = EventLog<Int>()
        let flaky = FlakyOperation(failures: 2, error: GATTError.timedOut(.seconds(1)), handle: 1, attempts: attempts)
        #expect(try await queue.run(flaky.retry(attempts: 3, when: .timeouts)) == [1])
        #expect(attempts.all == [1, 2, 3])
    }

    @Test("Retry gives up after the last attempt with the last error")
    func retryExhausted() async {
        let queue = GATTOperationQueue(performer: ScriptedATTPerformer(values: [1: [1]]))
        let attempts = EventLog<Int>()
        let flaky = FlakyOperation(failures: 5, error: GATTError.timedOut(.seconds(1)), handle: 1, attempts: attempts)
        await #expect(throws: GATTError.timedOut(.seconds(1))) {
            try await queue.run(flaky.retry(attempts: 2, when: .timeouts))
        }
        #expect(attempts.all == [1, 2])
    }

    @Test("Errors the policy does not call retryable, and disconnection always, fail at once")
    func retryOnlyRetryableErrors() async {
        let queue = GATTOperationQueue(performer: ScriptedATTPerformer(values: [1: [1]]))
        let notPermitted = GATTError.procedure(.errorResponse(.readNotPermitted, requestOpcode: .readRequest, handle: 1))
        let attempts = EventLog<Int>()
        await #expect(throws: notPermitted) {
            try await queue.run(
                FlakyOperation(failures: 1, error: notPermitted, handle: 1, attempts: attempts).retry(attempts: 3, when: .timeouts))
        }
        #expect(attempts.all == [1])

        let always = RetryPolicy<GATTError> { _, _ in true }
        let disconnectedAttempts = EventLog<Int>()
        await #expect(throws: GATTError.disconnected(.unknownConnectionIdentifier)) {
            try await queue.run(
                FlakyOperation(failures: 1, error: GATTError.disconnected(.unknownConnectionIdentifier), handle: 1, attempts: disconnectedAttempts)
                    .retry(attempts: 3, when: always))
        }
        #expect(disconnectedAttempts.all == [1])
    }

    @Test("Retry with an ATT-error policy re-sends the request after Insufficient Resources")
    func retryOnATTError() async throws {
        let performer = ScriptedATTPerformer(values: [1: [9]])
        await performer.fail(1, with: [.insufficientResources])
        let queue = GATTOperationQueue(performer: performer)
        let busy = RetryPolicy<GATTError> { error, _ in error.attErrorCode == .insufficientResources }
        #expect(try await queue.run(GATTOperations.read(handle: 1).retry(attempts: 3, when: busy)) == [9])
        #expect(await performer.events == [.request(.readRequest(handle: 1)), .request(.readRequest(handle: 1))])
    }

    @Test("Retry around a timeout: a first attempt that times out on the test clock is retried")
    func retryAfterTimeout() async throws {
        let clock = TestClock()
        let performer = ScriptedATTPerformer(values: [1: [1]])
        let gate = Gate()
        await performer.setGate(gate, for: 1)
        let queue = GATTOperationQueue(performer: performer)
        let operation = await queue.submit(
            GATTOperations.read(handle: 1).timeout(.seconds(5), clock: clock).retry(attempts: 2, when: .timeouts))
        await gate.arrived.wait()
        await clock.waitForSleepers(count: 1)
        await clock.advance(by: .seconds(5))
        // Let the first attempt's cancellation land before the bearer starts answering again.
        await performer.waitForEvents(count: 2)
        gate.open()
        #expect(try await operation.value == [1])
        #expect(await performer.events == [
            .request(.readRequest(handle: 1)), .cancelled(.readRequest(handle: 1)), .request(.readRequest(handle: 1)),
        ])
    }

    @Test("Queue decorators wrap every submitted operation, the first listed outermost")
    func queueDecoratorsWrapEveryOperation() async throws {
        let log = EventLog<String>()
        let queue = GATTOperationQueue(
            performer: ScriptedATTPerformer(values: [1: [1], 2: [2], 3: [3]]),
            decorators: [LoggingDecorator(name: "outer", log: log), LoggingDecorator(name: "inner", log: log)])
        for handle in UInt16(1)...3 { _ = try await queue.run(LoggedRead(handle: handle, log: log)) }
        #expect(log.all == [
            "outer", "inner", "read 1", "outer", "inner", "read 2", "outer", "inner", "read 3",
        ])
    }

    @Test("Auto-connect ensures the link before every operation and reconnects after a drop")
    func autoConnect() async throws {
        let log = EventLog<String>()
        let establisher = FakeEstablisher(log: log)
        let performer = ScriptedATTPerformer(values: [1: [1], 2: [2], 3: [3]])
        let queue = GATTOperationQueue(performer: performer, decorators: [AutoConnectDecorator(establisher: establisher)])
        _ = try await queue.run(LoggedRead(handle: 1, log: log))
        _ = try await queue.run(LoggedRead(handle: 2, log: log))
        await establisher.drop()
        _ = try await queue.run(LoggedRead(handle: 3, log: log))
        #expect(log.all == ["connect", "read 1", "read 2", "connect", "read 3"])
    }

    @Test("Auto-authorize runs before operations that need it, and after Insufficient Authentication with one retry")
    func autoAuthorize() async throws {
        let log = EventLog<String>()
        let performer = ScriptedATTPerformer(values: [1: [1], 2: [2], 3: [3]])
        await performer.fail(3, with: [.insufficientAuthentication])
        let queue = GATTOperationQueue(performer: performer, decorators: [AutoAuthorizeDecorator(authorizer: FakeAuthorizer(log: log))])
        _ = try await queue.run(LoggedRead(handle: 1, log: log, requirements: .authorization))
        _ = try await queue.run(LoggedRead(handle: 2, log: log))
        #expect(try await queue.run(LoggedRead(handle: 3, log: log)) == [3])
        #expect(log.all == ["authorize", "read 1", "read 2", "read 3", "authorize", "read 3"])
    }

    @Test("Auto-connect resumes an operation the link dropped under at most resumeAttempts times, and never other failures")
    func autoConnectResumesOnlyDisconnectionsAndOnlySoOften() async throws {
        let log = EventLog<String>()
        let establisher = FakeEstablisher(log: log)
        let performer = ScriptedATTPerformer(values: [1: [1]])
        let queue = GATTOperationQueue(performer: performer, decorators: [AutoConnectDecorator(establisher: establisher, resumeAttempts: 2)])

        // Two drops, then the read: resumed twice.
        let resumed = EventLog<Int>()
        let twice = FlakyOperation(failures: 2, error: GATTError.disconnected(.connectionTimeout), handle: 1, attempts: resumed)
        #expect(try await queue.run(twice) == [1])
        #expect(resumed.all == [1, 2, 3])

        // Three drops: the third is the caller's.
        let given = EventLog<Int>()
        let thrice = FlakyOperation(failures: 3, error: GATTError.disconnected(.remoteUserTerminatedConnection), handle: 1, attempts: given)
        await #expect(throws: GATTError.disconnected(.remoteUserTerminatedConnection)) { try await queue.run(thrice) }
        #expect(given.all == [1, 2, 3])

        // Anything else is not the link's fault: never resumed.
        let once = EventLog<Int>()
        let timedOut = FlakyOperation(failures: 1, error: GATTError.timedOut(.seconds(1)), handle: 1, attempts: once)
        await #expect(throws: GATTError.timedOut(.seconds(1))) { try await queue.run(timedOut) }
        #expect(once.all == [1])
    }

    @Test("An operation declaring withoutLink (disconnecting) never brings the link up")
    func withoutLinkSkipsAutoConnect() async throws {
        let log = EventLog<String>()
        let establisher = FakeEstablisher(log: log)
        let performer = ScriptedATTPerformer(values: [1: [1]])
        let queue = GATTOperationQueue(performer: performer, decorators: [AutoConnectDecorator(establisher: establisher)])
        _ = try await queue.run(LoggedRead(handle: 1, log: log, requirements: .withoutLink))
        #expect(log.all == ["read 1"])
        _ = try await queue.run(LoggedRead(handle: 1, log: log))
        #expect(log.all == ["read 1", "connect", "read 1"])
    }

    @Test("A decorator attached later wraps the operations submitted from then on, outermost when asked")
    func attachingDecorators() async throws {
        let log = EventLog<String>()
        let performer = ScriptedATTPerformer(values: [1: [1]])
        let queue = GATTOperationQueue(performer: performer)
        _ = try await queue.run(LoggedRead(handle: 1, log: log))
        await queue.attach(LoggingDecorator(name: "inner", log: log))
        await queue.attach(LoggingDecorator(name: "outer", log: log), outermost: true)
        _ = try await queue.run(LoggedRead(handle: 1, log: log))
        #expect(log.all == ["read 1", "outer", "inner", "read 1"])
    }
}
