import Synchronization

/// An unbounded FIFO between producers on any thread and one asynchronous consumer: the transport's
/// reader thread and the host's receive loop (`HCIInboundPackets`), the host and a notification
/// subscriber (`CharacteristicSubscription`).
///
/// `next` takes the caller's isolation, so a consumer on an actor stays on that actor's executor:
/// when elements are buffered it returns at once under one lock, with no suspension and no executor
/// hop (a nonisolated `async` function would hop to the global executor and back per element).
/// It suspends only when the queue is empty. Cancelling a waiting consumer makes that `next` return
/// nil and loses nothing: a later `next` gets what arrived meanwhile.
///
/// The type is public and its members package on purpose: the compiler (Swift 6.3) does not
/// specialize a `package` generic type's `@inlinable` methods in another module, so the host's
/// notification queue, `SingleConsumerQueue<GATTNotification, Never>` in `Bluewire`, ran the
/// unspecialized `next` and `yield`; `Benchmarks/NotificationPath` measured about 3.6 µs per
/// notification that way against 0.9 µs for a concrete queue. A public type with the same members
/// is specialized where it is used.
@_documentation(visibility: internal)
public final class SingleConsumerQueue<Element: Sendable, Failure: Error>: Sendable {
    /// Unsafe, not checked: a checked continuation allocates a canary each time the consumer waits.
    /// Each is resumed exactly once: it is resumed only by whoever removes it from `waiters` under
    /// the lock (`yield`, `finish`, the cancellation handler), or at once if never stored.
    @usableFromInline typealias Waiter = UnsafeContinuation<Result<Element?, Failure>, Never>

    @usableFromInline struct State {
        @usableFromInline var buffer: [Element] = []
        @usableFromInline var head = 0
        @usableFromInline var end: Result<Void, Failure>?
        @usableFromInline var endReported = false
        @usableFromInline var waiters: [(id: UInt64, continuation: Waiter)] = []
        @usableFromInline var nextWaiterID: UInt64 = 0

        @usableFromInline init() {}

        @inlinable mutating func pop() -> Element? {
            guard head < buffer.count else { return nil }
            let element = buffer[head]
            head += 1
            if head == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024, head * 2 >= buffer.count {
                // A consumer that lags: reclaim the consumed front now and then, not per element.
                buffer.removeFirst(head)
                head = 0
            }
            return element
        }

        /// After the end: the failure once, then nil.
        @inlinable mutating func endResult() -> Result<Element?, Failure> {
            if case .failure(let error) = end, !endReported {
                endReported = true
                return .failure(error)
            }
            return .success(nil)
        }
    }

    // Inlinable (specialized in the modules that use the queue: the host's notification queues are
    // in Bluewire): an unspecialized generic queue costs about a microsecond per element.
    @usableFromInline let state = Mutex(State())

    @inlinable package init() {}

    /// Appends `element`, or hands it to the waiting consumer. Ignored after `finish`.
    @inlinable package func yield(_ element: Element) {
        let waiter: Waiter? = state.withLock { state in
            guard state.end == nil else { return nil }
            if !state.waiters.isEmpty { return state.waiters.removeFirst().continuation }
            state.buffer.append(element)
            return nil
        }
        waiter?.resume(returning: .success(element))
    }

    /// Appends every element of `elements` in order under one lock, handing the first to the
    /// waiting consumer, if any: a producer with a burst (a transport read that held several
    /// packets) wakes the consumer once for all of them, and the consumer takes the rest with
    /// `takeBuffered` without suspending again. Ignored after `finish`.
    @inlinable package func yield(contentsOf elements: some Collection<Element>) {
        guard let first = elements.first else { return }
        let waiter: Waiter? = state.withLock { state in
            guard state.end == nil else { return nil }
            if !state.waiters.isEmpty {
                state.buffer.append(contentsOf: elements.dropFirst())
                return state.waiters.removeFirst().continuation
            }
            state.buffer.append(contentsOf: elements)
            return nil
        }
        waiter?.resume(returning: .success(first))
    }

    /// Ends the queue: the consumer gets what is buffered, then `error` once (if any), then nil.
    /// Later calls are ignored.
    @inlinable package func finish(throwing error: Failure? = nil) {
        let waiters: [(Waiter, Result<Element?, Failure>)] = state.withLock { state in
            guard state.end == nil else { return [] }
            state.end = error.map { .failure($0) } ?? .success(())
            guard state.head == state.buffer.count else { return [] }
            let waiting = state.waiters
            state.waiters = []
            return waiting.map { ($0.continuation, state.endResult()) }
        }
        for (waiter, result) in waiters { waiter.resume(returning: result) }
    }

    /// The next buffered element without waiting; nil when none is buffered (the end, if any, is
    /// reported by `next`). Lets a consumer take a burst in one go, with no `await` per element.
    @inlinable package func nextBuffered() -> Element? {
        state.withLock { $0.pop() }
    }

    /// Every buffered element, in order, without waiting, in `batch` (emptied first; its capacity
    /// is kept): one lock for a whole burst where `nextBuffered` takes one per element. The
    /// buffer and `batch` trade storage, so a consumer that reuses `batch` allocates nothing once
    /// both have grown to its bursts. The end, if any, is reported by `next`.
    @inlinable package func takeBuffered(into batch: inout [Element]) {
        batch.removeAll(keepingCapacity: true)
        state.withLock { state in
            guard state.head < state.buffer.count else { return }
            if state.head == 0 {
                swap(&batch, &state.buffer)
            } else {
                batch.append(contentsOf: state.buffer[state.head...])
                state.buffer.removeAll(keepingCapacity: true)
                state.head = 0
            }
        }
    }

    /// The next element; nil once the queue finished (after throwing its error, if it had one) or
    /// when the waiting task is cancelled.
    @inlinable package func next(isolation actor: isolated (any Actor)? = #isolation) async throws(Failure) -> Element? {
        let ready: Result<Element?, Failure>? = state.withLock { state in
            if let element = state.pop() { return .success(element) }
            return state.end == nil ? nil : state.endResult()
        }
        if let ready { return try ready.get() }

        let id = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        // Both take the caller's isolation (`#isolation`, here `actor`) by default.
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: Waiter) in
                let immediate: Result<Element?, Failure>? = state.withLock { state in
                    if let element = state.pop() { return .success(element) }
                    if state.end != nil { return state.endResult() }
                    if Task.isCancelled { return .success(nil) }
                    state.waiters.append((id, continuation))
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter: Waiter? = state.withLock { state in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(returning: .success(nil))
        }
        return try result.get()
    }
}
