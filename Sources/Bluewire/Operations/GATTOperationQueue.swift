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
///   `OperationError.cancelled` (in the operation's own error type) at once.
/// - ``failAll(with:)`` (on disconnection) answers every queued and running operation with the error at
///   once, without waiting for the running one to notice its cancellation: none hangs.
/// - The next operation starts only after the running one has actually returned, even if its caller was
///   already answered, so two operations never use the bearer at once.
/// - The queue runs on its own serial executor, or on the one of the actor it was created with
///   (``init(performer:decorators:sharingExecutorWith:)``): a `BluetoothHost`'s connection and
///   `RemotePeripheral` queues run on the host's, so the host answers a link's operations from its
///   executor without a hop and without a second actor to order against.
/// - One worker task runs the operations one after another and parks between them (not a task per
///   operation, nor per burst: a task's creation and the task memory its operations grow into were
///   about half of the allocations of a `GATTClient.write`). A parked worker does not keep the queue
///   alive. Cancelling the running operation cancels the worker, which stops after that operation
///   returns, and a fresh worker takes the rest.
public actor GATTOperationQueue {
    private struct Job: Sendable {
        let id: OperationID
        /// The operation and its outcome, in one object (`OperationResultBox`): a submission
        /// allocates that and nothing else of the queue's.
        let operation: any QueuedJob

        /// Runs on the worker's isolation (the queue's, so the host's executor for a host's queue).
        nonisolated(nonsending) func run(_ performer: any ATTRequestPerformer) async { await operation.run(on: performer) }
        func fail(_ end: OperationError) { operation.fail(end) }
        func isSettled() -> Bool { operation.isSettled }
    }

    /// A queue created without an actor to share an executor with runs on this one's.
    private actor OwnExecutor {}

    private let performer: any ATTRequestPerformer
    private var decorators: [any OperationQueueDecorator]
    private var pending: [Job] = []
    private var pendingStart = 0
    /// The operation using the bearer now.
    private var running: Job?
    /// The task running the queued operations one after another; it parks on `workerLink` when
    /// none is left (`workerIsParked`) and is woken by the next submission.
    private var worker: Task<Void, Never>?
    private var workerLink: GATTOperationQueueWorkerLink?
    private var workerIsParked = false
    private var workerTasksStarted = 0
    private var lastID: UInt64 = 0
    /// Tasks in `waitForQueued(count:)`.
    private var queuedWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    /// Set by `holdQueued()`: nothing more starts until `failAll` answers what waits.
    private var isHeld = false
    /// The actor whose serial executor this queue runs on (held, so the executor outlives the queue).
    private nonisolated let executorOwner: any Actor

    /// The executor of the actor given at creation, or this queue's own.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executorOwner.unownedExecutor }

    /// A queue running operations against `performer`, each wrapped by `decorators`.
    ///
    /// - Parameters:
    ///   - performer: what sends each operation's ATT requests on the link's bearer.
    ///   - decorators: wrappers applied to every operation submitted, outermost first.
    ///   - actor: an actor whose serial executor the queue runs on (a `BluetoothHost`, for its
    ///     links' queues), so that the queue's bookkeeping and that actor's work never run at once
    ///     and need no hop between them; nil (the default) gives the queue its own executor.
    public init(
        performer: any ATTRequestPerformer,
        decorators: [any OperationQueueDecorator] = [],
        sharingExecutorWith actor: (any Actor)? = nil
    ) {
        self.performer = performer
        self.decorators = decorators
        self.executorOwner = actor ?? OwnExecutor()
    }

    deinit {
        // A parked worker holds only the link: closing it ends the worker.
        workerLink?.close()
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
    public func submit<Operation: GATTOperation>(_ operation: Operation) -> QueuedOperation<Operation.Result, Operation.Failure> {
        lastID += 1
        let id = OperationID(rawValue: lastID)
        let decorated = decorate(operation)
        let box = OperationResultBox(running: decorated)
        pending.append(Job(id: id, operation: box))
        startWorkerIfIdle()
        resumeQueuedWaiters()
        return QueuedOperation(id: id, queue: self, box: box)
    }

    /// Queues `operation` and waits for its result. Cancelling the calling task cancels the operation;
    /// a task cancelled before it calls this is answered at once, and the operation never runs.
    public func run<Operation: GATTOperation>(_ operation: Operation) async throws(Operation.Failure) -> Operation.Result {
        try await submit(operation).value
    }

    /// Cancels a queued operation (it never runs) or the running one (its task is cancelled). Its caller
    /// gets `OperationError.cancelled(id)`, in its own error type. Unknown or finished ids are ignored.
    public func cancel(_ id: OperationID) {
        if let index = pending[pendingStart...].firstIndex(where: { $0.id == id }) {
            pending.remove(at: index).fail(OperationError.cancelled(id))
        } else if let running, running.id == id {
            running.fail(OperationError.cancelled(id))
            worker?.cancel()
        }
    }

    /// Fails every queued operation and the running one with `error` (typically
    /// `OperationError.disconnected(reason:)` when the link drops). Their callers are answered now; the
    /// running operation's task is cancelled. Operations submitted afterwards run normally. A
    /// connection's own queue (`GATTClient.queue`) ends with its link; the queue that outlives links
    /// is a `RemotePeripheral`'s, where auto-connect reconnects first instead of failing everything.
    public func failAll(with error: OperationError) {
        failAll(with: error, running: nil)
    }

    /// `failAll(with:)`, except that the running operation, if it is `running.id`, is answered with
    /// `running.error`: what its own work already failed with (its request timed out and the bearer
    /// closed, so the link is going), which the link's end must not overwrite.
    func failAll(with error: OperationError, running ownFailure: (id: OperationID, error: OperationError)?) {
        isHeld = false
        let failed = pending[pendingStart...]
        pending.removeAll()
        pendingStart = 0
        for job in failed { job.fail(error) }
        if let running {
            if let ownFailure, ownFailure.id == running.id {
                running.fail(ownFailure.error)
            } else {
                running.fail(error)
            }
            worker?.cancel()
        }
    }

    /// Ids of the operations waiting to run, in the order they will run.
    public var queuedIDs: [OperationID] { pending[pendingStart...].map(\.id) }

    /// Returns once at least `count` operations wait behind the running one (at once if they do):
    /// for tests that queue operations from other tasks and must know they are queued before acting.
    /// Checked whenever an operation is submitted, so no polling is needed.
    @_spi(Testing)
    public func waitForQueued(count: Int) async {
        if waitingBehindRunning >= count { return }
        await withCheckedContinuation { queuedWaiters.append((count, $0)) }
    }

    /// Operations queued behind the one running or about to run (the worker takes the first
    /// queued one when it next runs).
    private var waitingBehindRunning: Int {
        let queued = pending.count - pendingStart
        return running == nil && queued > 0 ? queued - 1 : queued
    }

    private func resumeQueuedWaiters() {
        guard !queuedWaiters.isEmpty else { return }
        let queued = waitingBehindRunning
        let ready = queuedWaiters.filter { queued >= $0.count }
        queuedWaiters.removeAll { queued >= $0.count }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Worker tasks started so far: one for every operation that follows an idle spell or a
    /// cancelled operation would mean the worker is not kept between operations.
    @_spi(Testing)
    public var workersStarted: Int { workerTasksStarted }

    /// The id of the operation using the bearer now, if any.
    public var runningID: OperationID? { running?.id }

    private func decorate<Operation: GATTOperation>(_ operation: Operation) -> any GATTOperation<Operation.Result, Operation.Failure> {
        var wrapped: any GATTOperation<Operation.Result, Operation.Failure> = operation
        for decorator in decorators.reversed() {
            wrapped = decorator.decorate(wrapped)
        }
        return wrapped
    }

    /// Starts nothing more (the running operation goes on) until ``failAll(with:)``: the bearer
    /// can carry no more ATT (a transaction timed out, Core Vol 3 Part F §3.3.3) and the link is being
    /// dropped, so what is queued waits to be answered with the disconnection instead of being sent
    /// to a closed bearer or refused by a machine in Error.
    func holdQueued() {
        isHeld = true
    }

    /// Wakes the parked worker, or starts one if there is none.
    private func startWorkerIfIdle() {
        guard !isHeld else { return }
        if let workerLink {
            if workerIsParked {
                workerIsParked = false
                workerLink.wake()
            }
            return
        }
        let link = GATTOperationQueueWorkerLink(queue: self)
        workerLink = link
        workerIsParked = false
        worker = Self.startWorker(link, on: executorOwner)
        workerTasksStarted += 1
    }

    /// The worker's task, created outside the queue's isolation so that it captures only `link`
    /// (which holds the queue weakly): parked, it keeps nothing alive.
    private nonisolated static func startWorker(_ link: GATTOperationQueueWorkerLink, on owner: any Actor) -> Task<Void, Never> {
        Task { await work(link, on: owner) }
    }

    /// The worker: runs what is queued, parks until a submission wakes it, and ends when its queue
    /// is gone or its task was cancelled. It runs on `owner`'s executor, the queue's, so calling into
    /// the queue is no hop.
    private static func work(_ link: GATTOperationQueueWorkerLink, on owner: isolated any Actor) async {
        while true {
            do {
                // Held strongly only while running operations, never while parked.
                guard let queue = link.queue, await queue.runQueued() else { return }
            }
            guard await link.park() else { return }
        }
    }

    /// Runs the queued operations one after another until none is left (true: the worker parks), or
    /// until the running one was cancelled (false: this task is cancelled for good, so it ends and a
    /// new worker takes the rest).
    private func runQueued() async -> Bool {
        while !Task.isCancelled, !isHeld, let job = nextJob() {
            running = job
            await job.run(performer)
            running = nil
        }
        guard Task.isCancelled else {
            workerIsParked = true
            return true
        }
        workerLink?.close()
        workerLink = nil
        worker = nil
        if pendingStart < pending.count { startWorkerIfIdle() }
        return false
    }

    /// The next queued operation whose caller is still waiting for it.
    private func nextJob() -> Job? {
        while pendingStart < pending.count {
            let job = pending[pendingStart]
            pendingStart += 1
            if pendingStart == pending.count {
                pending.removeAll(keepingCapacity: true)
                pendingStart = 0
            }
            // Its waiting task was cancelled and has been answered already; the queue hears of it later.
            if job.isSettled() { continue }
            return job
        }
        return nil
    }
}

/// A handle on an operation submitted to an `GATTOperationQueue`.
public struct QueuedOperation<Result: Sendable, Failure: OperationFailure>: Sendable {
    /// The id to pass to `GATTOperationQueue.cancel(_:)`.
    public let id: OperationID
    let queue: GATTOperationQueue
    let box: OperationResultBox<Result, Failure>

    /// The operation's result. Cancelling the awaiting task cancels the operation and throws
    /// `OperationError.cancelled(id)`, in the operation's error type.
    ///
    /// It runs on the caller's executor (`nonisolated(nonsending)`), so `GATTOperationQueue.run(_:)`
    /// submits and starts waiting without leaving the queue's executor: a caller already cancelled is
    /// answered before the queue's worker can take the operation, which then never reaches the bearer.
    /// (Hopping off between the two let the worker send it first.)
    public nonisolated(nonsending) var value: Result {
        get async throws(Failure) {
            let id = self.id
            let box = self.box
            let queue = self.queue
            let result = await withTaskCancellationHandler {
                await box.result()
            } onCancel: {
                box.settle(.failure(Failure(.cancelled(id))))
                // The caller is answered above; the queue drops or cancels the operation when it hears.
                Task { await queue.cancel(id) }
            }
            return try result.get()
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
