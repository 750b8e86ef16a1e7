import BluewireATT
import BluewireGATT
import Synchronization
import Testing

@_spi(Testing) import Bluewire

/// Forwards to a scripted performer, and signals `released` when the last reference to it goes,
/// which is when the queue holding it is freed.
private final class ReleaseSignallingPerformer: ATTRequestPerformer {
    let inner: ScriptedATTPerformer
    let released: Latch

    init(_ inner: ScriptedATTPerformer, released: Latch) {
        self.inner = inner
        self.released = released
    }

    deinit { released.signal() }

    var mtu: Int { get async { await inner.mtu } }

    nonisolated(nonsending) func request(_ pdu: ATTPDU) async throws(ConnectionError) -> ATTPDU {
        try await inner.request(pdu)
    }

    nonisolated(nonsending) func send(_ pdu: ATTPDU) async throws(ConnectionError) {
        try await inner.send(pdu)
    }

    func notifications(for valueHandle: UInt16) async -> AsyncStream<ArraySlice<UInt8>> {
        await inner.notifications(for: valueHandle)
    }
}

/// The queue's one worker task: kept between operations (parked, woken by the next submission), not
/// keeping its queue alive while parked, and replaced after a cancelled operation cancelled it.
@Suite("Operation queue: its worker task", .timeLimit(.minutes(1)))
struct OperationQueueWorkerTests {
    @Test("Operations run one at a time, each after the last returned, share one worker task")
    func oneWorkerAcrossIdleSpells() async throws {
        let performer = ScriptedATTPerformer(values: [1: [1], 2: [2], 3: [3], 4: [4]])
        let queue = GATTOperationQueue(performer: performer)
        for handle in UInt16(1)...4 {
            #expect(try await queue.run(GATTOperations.read(handle: handle)) == [UInt8(handle)])
        }
        #expect(await queue.workersStarted == 1)
        #expect(await performer.events.map(\.handle) == [1, 2, 3, 4])
    }

    @Test("Cancelling the running operation ends its worker after it returns; a new worker runs the next")
    func cancelledWorkerIsReplaced() async throws {
        let performer = ScriptedATTPerformer(values: [1: [1], 2: [2], 3: [3]])
        let gate = Gate()
        await performer.setGate(gate, for: 1)
        let queue = GATTOperationQueue(performer: performer)
        let cancelled = Task { try await queue.run(GATTOperations.read(handle: 1)) }
        await gate.arrived.wait()
        cancelled.cancel()
        await #expect(throws: GATTError.cancelled) { try await cancelled.value }
        #expect(try await queue.run(GATTOperations.read(handle: 2)) == [2])
        #expect(try await queue.run(GATTOperations.read(handle: 3)) == [3])
        #expect(await queue.workersStarted == 2, "one for the cancelled operation, one for the two after it")
        #expect(await performer.events == [
            .request(.readRequest(handle: 1)), .cancelled(.readRequest(handle: 1)),
            .request(.readRequest(handle: 2)), .request(.readRequest(handle: 3)),
        ])
    }

    /// A worker that held its queue while parked would keep it (and its performer) forever: the wait
    /// below would then run into the suite's time limit.
    @Test("A queue whose worker is parked is freed once nothing else holds it, and its performer with it")
    func parkedWorkerDoesNotKeepTheQueue() async throws {
        let released = Latch()
        let scripted = ScriptedATTPerformer(values: [1: [1]])
        do {
            let queue = GATTOperationQueue(performer: ReleaseSignallingPerformer(scripted, released: released))
            #expect(try await queue.run(GATTOperations.read(handle: 1)) == [1])
            #expect(await queue.workersStarted == 1)
        }
        await released.wait()
        #expect(await scripted.events.map(\.handle) == [1])
    }
}
