import BluewireCore
import Synchronization

/// The buffer between a transport's I/O thread (producer) and the Host (consumer).
///
/// Unlike `AsyncStream`, a consumer whose task is cancelled while it waits (a caller-side timeout)
/// gets nil from that one `next()` and the queue stays usable: packets arriving later are not lost
/// and the next call receives them. Packets keep their arrival order; waiters are served first come,
/// first served.
final class InboundPacketQueue: Sendable {
    private typealias Waiter = CheckedContinuation<Result<HCIPacket?, TransportError>, Never>

    private struct State {
        var buffer: [HCIPacket] = []
        var head = 0
        /// Set once: nil while open, `.success` after a clean finish, `.failure` after an error.
        var end: Result<Void, TransportError>?
        /// Whether the end error has been thrown to a consumer (it is thrown once, then nil follows).
        var endReported = false
        var waiters: [(id: UInt64, continuation: Waiter)] = []
        var nextWaiterID: UInt64 = 0

        mutating func pop() -> HCIPacket? {
            guard head < buffer.count else { return nil }
            let packet = buffer[head]
            head += 1
            if head == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024, head * 2 >= buffer.count {
                buffer.removeFirst(head)
                head = 0
            }
            return packet
        }

        mutating func endResult() -> Result<HCIPacket?, TransportError> {
            if case .failure(let error) = end, !endReported {
                endReported = true
                return .failure(error)
            }
            return .success(nil)
        }
    }

    private let state = Mutex(State())

    func yield(_ packet: HCIPacket) {
        let waiter: Waiter? = state.withLock { state in
            guard state.end == nil else { return nil }
            if !state.waiters.isEmpty { return state.waiters.removeFirst().continuation }
            state.buffer.append(packet)
            return nil
        }
        waiter?.resume(returning: .success(packet))
    }

    func finish(throwing error: TransportError?) {
        let waiters: [(Waiter, Result<HCIPacket?, TransportError>)] = state.withLock { state in
            guard state.end == nil else { return [] }
            state.end = error.map { .failure($0) } ?? .success(())
            guard state.head == state.buffer.count else { return [] }
            defer { state.waiters = [] }
            return state.waiters.map { ($0.continuation, state.endResult()) }
        }
        for (waiter, result) in waiters { waiter.resume(returning: result) }
    }

    func next() async throws(TransportError) -> HCIPacket? {
        let ready: Result<HCIPacket?, TransportError>? = state.withLock { state in
            if let packet = state.pop() { return .success(packet) }
            return state.end == nil ? nil : state.endResult()
        }
        if let ready { return try ready.get() }

        let id = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Waiter) in
                let immediate: Result<HCIPacket?, TransportError>? = state.withLock { state in
                    if let packet = state.pop() { return .success(packet) }
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
