import Bluewire
import BluewireATT
import BluewireGATT
import BluewireHCI
import Synchronization
import Testing

/// Reads then writes back one handle: two ATT exchanges that must stay adjacent on the bearer.
private struct ReadThenWrite: GATTOperation {
    let handle: UInt16
    let running: ConcurrencyCounter

    func execute(on context: any ATTRequestPerformer) async throws(GATTError) -> [UInt8] {
        running.enter()
        defer { running.leave() }
        let value = try await context.perform(ReadCharacteristicValue(handle: handle))
        await Task.yield()
        try await context.perform(WriteCharacteristicValue(handle: handle, value: value + [0xFF], mtu: await context.mtu))
        return value
    }
}

/// Counts operations running at once and remembers the most seen.
private final class ConcurrencyCounter: Sendable {
    private let state = Mutex<(now: Int, max: Int)>((0, 0))
    func enter() { state.withLock { $0.now += 1; $0.max = Swift.max($0.max, $0.now) } }
    func leave() { state.withLock { $0.now -= 1 } }
    var maximum: Int { state.withLock { $0.max } }
}

private func isCancellation(_ error: any Error) -> Bool {
    if case GATTError.cancelled = error { return true }
    return false
}

/// An actor whose executor a queue shares: it uses the queue synchronously (`assumeIsolated` traps
/// unless the queue runs on this actor's executor).
private actor QueueOwner {
    func submitWithoutHop(_ queue: GATTOperationQueue, handles: [UInt16]) -> (operations: [QueuedOperation<[UInt8], GATTError>], queued: [OperationID], running: OperationID?) {
        queue.assumeIsolated { queue in
            let operations = handles.map { queue.submit(GATTOperations.read(handle: $0)) }
            return (operations, queue.queuedIDs, queue.runningID)
        }
    }
}

@Suite("Operation queue: ordering, exclusivity, cancellation, failAll")
struct OperationQueueTests {
    @Test("Operations run in the order they were submitted")
    func runsInSubmissionOrder() async throws {
        let performer = ScriptedATTPerformer(values: Dictionary(uniqueKeysWithValues: (1...8).map { (UInt16($0), [UInt8($0)]) }))
        let queue = GATTOperationQueue(performer: performer)
        var submitted: [QueuedOperation<[UInt8], GATTError>] = []
        for handle in [UInt16](1...8) { submitted.append(await queue.submit(GATTOperations.read(handle: handle))) }
        for (index, operation) in submitted.enumerated() {
            #expect(try await operation.value == [UInt8(index + 1)])
        }
        #expect(await performer.events.map(\.handle) == Array(1...8))
        #expect(submitted.map(\.id) == submitted.map(\.id).sorted())
    }

    @Test("Concurrent callers never overlap: one operation, and one request, at a time")
    func oneAtATime() async throws {
        let performer = ScriptedATTPerformer(values: Dictionary(uniqueKeysWithValues: (1...20).map { (UInt16($0), [UInt8($0)]) }))
        let queue = GATTOperationQueue(performer: performer)
        let counter = ConcurrencyCounter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for handle in UInt16(1)...20 {
                group.addTask { _ = try await queue.run(ReadThenWrite(handle: handle, running: counter)) }
            }
            try await group.waitForAll()
        }
        #expect(counter.maximum == 1, "operations overlapped")
        #expect(await performer.maxConcurrentRequests == 1, "requests overlapped on the bearer")
        let handles = await performer.events.map(\.handle)
        #expect(handles.count == 40)
        for pair in stride(from: 0, to: handles.count, by: 2) {
            #expect(handles[pair] == handles[pair + 1], "read and write of one operation must be adjacent: \(handles)")
        }
        #expect(await performer.values[7] == [7, 0xFF])
    }

    @Test("Cancelling a queued operation answers its caller and it never runs")
    func cancelQueued() async throws {
        let performer = ScriptedATTPerformer(values: [1: [1], 2: [2], 3: [3]])
        let gate = Gate()
        await performer.setGate(gate, for: 1)
        let queue = GATTOperationQueue(performer: performer)
        let first = await queue.submit(GATTOperations.read(handle: 1))
        let second = await queue.submit(GATTOperations.read(handle: 2))
        let third = await queue.submit(GATTOperations.read(handle: 3))
        await gate.arrived.wait()
        #expect(await queue.runningID == first.id)
        #expect(await queue.queuedIDs == [second.id, third.id])

        await queue.cancel(second.id)
        await #expect(throws: GATTError.cancelled) { try await second.value }
        #expect(await queue.queuedIDs == [third.id])

        gate.open()
        #expect(try await first.value == [1])
        #expect(try await third.value == [3])
        #expect(await performer.events.map(\.handle) == [1, 3], "the cancelled read must never reach the bearer")
    }

    @Test("Cancelling the running operation cancels its request; the next starts only after it stopped")
    func cancelRunning() async throws {
        let performer = ScriptedATTPerformer(values: [1: [1], 2: [2]])
        let gate = Gate()
        await performer.setGate(gate, for: 1)
        let queue = GATTOperationQueue(performer: performer)
        let first = await queue.submit(GATTOperations.read(handle: 1))
        let second = await queue.submit(GATTOperations.read(handle: 2))
        await gate.arrived.wait()

        await first.cancel()
        await #expect(throws: GATTError.cancelled) { try await first.value }
        #expect(try await second.value == [2])
        #expect(await performer.events == [
            .request(.readRequest(handle: 1)), .cancelled(.readRequest(handle: 1)), .request(.readRequest(handle: 2)),
        ])
    }

    @Test("Cancelling the task that awaits a queued operation removes the operation")
    func taskCancellationOfQueued() async throws {
        let performer = ScriptedATTPerformer(values: [1: [1], 2: [2], 3: [3]])
        let gate = Gate()
        await performer.setGate(gate, for: 1)
        let queue = GATTOperationQueue(performer: performer)
        let first = await queue.submit(GATTOperations.read(handle: 1))
        let doomed = await queue.submit(GATTOperations.read(handle: 2))
        await gate.arrived.wait()

        let waiter = Task { try await doomed.value }
        waiter.cancel()
        await #expect(throws: GATTError.cancelled) { try await waiter.value }
        gate.open()
        #expect(try await first.value == [1])
        #expect(try await queue.run(GATTOperations.read(handle: 3)) == [3])
        #expect(await performer.events.map(\.handle) == [1, 3])
    }

    /// The caller was cancelled before it submitted (a throughput run cancelled as its stream ended,
    /// then asking for the sink report): its operation must not reach the bearer. The queue's worker
    /// could take it in the gap between the submission and the caller's wait, before the caller's
    /// cancellation handler had answered it; repeated, since that gap was a race.
    @Test("A task already cancelled when it runs an operation is answered with the cancellation, and nothing is sent")
    func alreadyCancelledCallerSendsNothing() async throws {
        let performer = ScriptedATTPerformer(values: [1: [1], 2: [2]])
        let queue = GATTOperationQueue(performer: performer)
        for _ in 0..<200 {
            let cancelledFirst = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await queue.run(GATTOperations.read(handle: 1))
            }
            await #expect { try await cancelledFirst.value } throws: { isCancellation($0) }
        }
        #expect(try await queue.run(GATTOperations.read(handle: 2)) == [2])
        #expect(await performer.events == [.request(.readRequest(handle: 2))], "no operation of a cancelled caller ran")
    }

    @Test("Cancelling the task that awaits the running operation cancels its request")
    func taskCancellationOfRunning() async throws {
        let performer = ScriptedATTPerformer(values: [1: [1], 2: [2]])
        let gate = Gate()
        await performer.setGate(gate, for: 1)
        let queue = GATTOperationQueue(performer: performer)
        let waiter = Task { try await queue.run(GATTOperations.read(handle: 1)) }
        await gate.arrived.wait()
        waiter.cancel()
        await #expect { try await waiter.value } throws: { isCancellation($0) }
        // The next operation runs only once the cancelled one has returned, so the log is complete by then.
        #expect(try await queue.run(GATTOperations.read(handle: 2)) == [2])
        #expect(await performer.events == [
            .request(.readRequest(handle: 1)), .cancelled(.readRequest(handle: 1)), .request(.readRequest(handle: 2)),
        ])
    }

    @Test("failAll answers the running and every queued operation with the error, even if the bearer never answers")
    func failAllLeavesNothingHanging() async throws {
        let performer = ScriptedATTPerformer(values: [1: [1], 2: [2], 3: [3], 4: [4]])
        // A bearer that neither answers nor notices cancellation: the worst case for "none hangs".
        let stuck = Gate(honoursCancellation: false)
        await performer.setGate(stuck, for: 1)
        let queue = GATTOperationQueue(performer: performer)
        let running = await queue.submit(GATTOperations.read(handle: 1))
        let queued = [await queue.submit(GATTOperations.read(handle: 2)), await queue.submit(GATTOperations.read(handle: 3))]
        await stuck.arrived.wait()

        await queue.failAll(with: OperationError.disconnected(reason: 0x13))
        for operation in [running] + queued {
            #expect(operation.isCompleted, "\(operation.id) still pending after failAll")
            await #expect(throws: GATTError.disconnected(HCIStatus(0x13))) { try await operation.value }
        }
        #expect(await queue.queuedIDs.isEmpty)

        // The queue keeps working after the link comes back (here: the stuck request finally returns).
        let later = await queue.submit(GATTOperations.read(handle: 4))
        stuck.open()
        #expect(try await later.value == [4])
        #expect(await performer.events.filter { if case .request = $0 { true } else { false } }.map(\.handle) == [1, 4])
    }

    @Test("Errors thrown by an operation reach its caller unchanged and the queue goes on")
    func operationErrorsPropagate() async throws {
        let performer = ScriptedATTPerformer(values: [2: [2]])
        let queue = GATTOperationQueue(performer: performer)
        await #expect(throws: GATTError.procedure(.errorResponse(.invalidHandle, requestOpcode: .readRequest, handle: 1))) {
            try await queue.run(GATTOperations.read(handle: 1))
        }
        #expect(try await queue.run(GATTOperations.read(handle: 2)) == [2])
    }

    @Test("A queue created with an actor runs on its executor: the actor uses it synchronously, and it still runs everything in order")
    func sharesTheOwnersExecutor() async throws {
        let performer = ScriptedATTPerformer(values: [1: [1], 2: [2], 3: [3]])
        let owner = QueueOwner()
        let queue = GATTOperationQueue(performer: performer, sharingExecutorWith: owner)
        let (operations, queued, running) = await owner.submitWithoutHop(queue, handles: [1, 2, 3])
        // The worker needs the same executor, so nothing has started while the owner held it.
        #expect(queued == operations.map(\.id))
        #expect(running == nil)
        for (index, operation) in operations.enumerated() { #expect(try await operation.value == [UInt8(index + 1)]) }
        #expect(await performer.events.map(\.handle) == [1, 2, 3])
    }
}
