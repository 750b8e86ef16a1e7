/// Runs one connection's GATT operations one at a time, first in, first out.
///
/// ATT allows a client one outstanding request per bearer (Core Vol 3 Part F §3.3.2), and a composite
/// operation (an OTA firmware update: read status, subscribe, write chunks as status notifications
/// arrive, unsubscribe) must hold the bearer until it is done, so that no other caller's request lands
/// between its steps. The queue gives each operation the bearer exclusively from start to finish.
///
/// - Every submitted operation is wrapped by the queue's decorators (first in the list = outermost),
///   e.g. `AutoConnectDecorator` and `AutoAuthorizeDecorator`.
/// - Cancelling (``cancel(_:)``, ``QueuedOperation/cancel()`` or cancelling the task awaiting the result)
///   removes a queued operation, or cancels the running one's task; the caller is answered with
///   `OperationError.cancelled` at once.
/// - ``failAll(with:)`` (on disconnection) answers every queued and running operation with the error at
///   once, without waiting for the running one to notice its cancellation: none hangs.
/// - The next operation starts only after the running one has actually returned, even if its caller was
///   already answered, so two operations never use the bearer at once.
public actor GATTOperationQueue {
    private struct Job: Sendable {
        let id: OperationID
        let run: @Sendable (any ATTRequestPerformer) async -> Void
        let fail: @Sendable (any Error) -> Void
        let isSettled: @Sendable () -> Bool
    }

    private let performer: any ATTRequestPerformer
    private var decorators: [any OperationQueueDecorator]
    private var pending: [Job] = []
    private var running: (job: Job, task: Task<Void, Never>)?
    private var lastID: UInt64 = 0
    /// Tasks in `waitForQueued(count:)`.
    private var queuedWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// A queue running operations against `performer`, each wrapped by `decorators`.
    public init(performer: any ATTRequestPerformer, decorators: [any OperationQueueDecorator] = []) {
        self.performer = performer
        self.decorators = decorators
    }

    /// Adds a decorator for the operations submitted from now on (those already queued keep theirs):
    /// innermost by default, or outermost (`AutoConnectDecorator` goes outside everything else, so the
    /// link is up before an authorizer or a timeout runs).
    public func attach(_ decorator: any OperationQueueDecorator, outermost: Bool = false) {
        if outermost {
            decorators.insert(decorator, at: 0)
        } else {
            decorators.append(decorator)
        }
    }

    /// Queues `operation` behind everything already queued and returns a handle to await or cancel it.
    public func submit<Operation: GATTOperation>(_ operation: Operation) -> QueuedOperation<Operation.Result> {
        lastID += 1
        let id = OperationID(rawValue: lastID)
        let decorated = decorate(operation)
        let box = OperationResultBox<Operation.Result>()
        pending.append(
            Job(
                id: id,
                run: { performer in
                    do {
                        box.settle(.success(try await decorated.execute(on: performer)))
                    } catch {
                        box.settle(.failure(error))
                    }
                },
                fail: { box.settle(.failure($0)) },
                isSettled: { box.isSettled }
            ))
        startNextIfIdle()
        resumeQueuedWaiters()
        return QueuedOperation(id: id, queue: self, box: box)
    }

    /// Queues `operation` and waits for its result. Cancelling the calling task cancels the operation.
    public func run<Operation: GATTOperation>(_ operation: Operation) async throws -> Operation.Result {
        try await submit(operation).value
    }

    /// Cancels a queued operation (it never runs) or the running one (its task is cancelled). Its caller
    /// gets `OperationError.cancelled(id)`. Unknown or finished ids are ignored.
    public func cancel(_ id: OperationID) {
        if let index = pending.firstIndex(where: { $0.id == id }) {
            pending.remove(at: index).fail(OperationError.cancelled(id))
        } else if let running, running.job.id == id {
            running.job.fail(OperationError.cancelled(id))
            running.task.cancel()
        }
    }

    /// Fails every queued operation and the running one with `error` (typically
    /// `OperationError.disconnected(reason:)` when the link drops). Their callers are answered now; the
    /// running operation's task is cancelled. Operations submitted afterwards run normally. A
    /// connection's own queue (`GATTClient.queue`) ends with its link; the queue that outlives links
    /// is a `RemotePeripheral`'s, where auto-connect reconnects first instead of failing everything.
    public func failAll(with error: any Error) {
        let failed = pending
        pending.removeAll()
        for job in failed { job.fail(error) }
        if let running {
            running.job.fail(error)
            running.task.cancel()
        }
    }

    /// Ids of the operations waiting to run, in the order they will run.
    public var queuedIDs: [OperationID] { pending.map(\.id) }

    /// Returns once at least `count` operations wait behind the running one (at once if they do):
    /// for tests that queue operations from other tasks and must know they are queued before acting.
    /// Checked whenever an operation is submitted, so no polling is needed.
    @_spi(Testing)
    public func waitForQueued(count: Int) async {
        if pending.count >= count { return }
        await withCheckedContinuation { queuedWaiters.append((count, $0)) }
    }

    private func resumeQueuedWaiters() {
        guard !queuedWaiters.isEmpty else { return }
        let queued = pending.count
        let ready = queuedWaiters.filter { queued >= $0.count }
        queuedWaiters.removeAll { queued >= $0.count }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// The id of the operation using the bearer now, if any.
    public var runningID: OperationID? { running?.job.id }

    private func decorate<Operation: GATTOperation>(_ operation: Operation) -> any GATTOperation<Operation.Result> {
        var wrapped: any GATTOperation<Operation.Result> = operation
        for decorator in decorators.reversed() {
            wrapped = decorator.decorate(wrapped)
        }
        return wrapped
    }

    private func startNextIfIdle() {
        guard running == nil else { return }
        while !pending.isEmpty {
            let job = pending.removeFirst()
            // Its waiting task was cancelled and has been answered already; the actor hears of it later.
            if job.isSettled() { continue }
            let performer = self.performer
            let task = Task {
                await job.run(performer)
                self.finished(job.id)
            }
            running = (job, task)
            return
        }
    }

    private func finished(_ id: OperationID) {
        if running?.job.id == id { running = nil }
        startNextIfIdle()
    }
}

/// A handle on an operation submitted to an `GATTOperationQueue`.
public struct QueuedOperation<Result: Sendable>: Sendable {
    /// The id to pass to `GATTOperationQueue.cancel(_:)`.
    public let id: OperationID
    let queue: GATTOperationQueue
    let box: OperationResultBox<Result>

    /// The operation's result. Cancelling the awaiting task cancels the operation and throws
    /// `OperationError.cancelled(id)`.
    public var value: Result {
        get async throws {
            let id = self.id
            let box = self.box
            let queue = self.queue
            return try await withTaskCancellationHandler {
                try await box.value()
            } onCancel: {
                box.settle(.failure(OperationError.cancelled(id)))
                // The caller is answered above; the queue drops or cancels the operation when it hears.
                Task { await queue.cancel(id) }
            }
        }
    }

    /// Whether the operation's outcome is known (it finished, failed or was cancelled or failed by
    /// `failAll`); `value` then returns without waiting.
    public var isCompleted: Bool { box.isSettled }

    /// Cancels the operation (see `GATTOperationQueue.cancel(_:)`).
    public func cancel() async {
        await queue.cancel(id)
    }
}
