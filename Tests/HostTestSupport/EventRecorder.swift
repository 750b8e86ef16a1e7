import Bluewire
import Testing

/// Collects a stream's events (a Host's peripheral events, a RemotePeripheral's) for a test to wait on.
/// Shared by the host tests on a virtual link and their bumble twins.
public actor EventRecorder<Event: Sendable> {
    public struct TimedOut: Error, CustomStringConvertible {
        public var description: String
    }

    public private(set) var events: [Event] = []
    private var waiters: [UInt64: (count: Int, predicate: @Sendable (Event) -> Bool, continuation: CheckedContinuation<Void, any Error>)] = [:]
    private var nextID: UInt64 = 0

    public init(_ stream: AsyncStream<Event>) {
        Task { for await event in stream { await self.append(event) } }
    }

    private func append(_ event: Event) {
        events.append(event)
        for (id, waiter) in waiters where events.filter(waiter.predicate).count >= waiter.count {
            waiters[id] = nil
            waiter.continuation.resume()
        }
    }

    /// Waits until `count` events match. The virtual link is immediate, so the limit is only there
    /// to turn a Host that never gets there into a failure instead of a hang (a bumble peer, which
    /// answers from Python on a shared machine, gets a longer one).
    public func wait(
        for count: Int = 1, within limit: Duration = .seconds(10), _ what: String, where predicate: @escaping @Sendable (Event) -> Bool
    ) async throws {
        if events.filter(predicate).count >= count { return }
        let id = nextID
        nextID += 1
        let timer = Task {
            try await Task.sleep(for: limit)
            self.expire(id, what)
        }
        defer { timer.cancel() }
        try await withCheckedThrowingContinuation { waiters[id] = (count, predicate, $0) }
    }

    public func count(where predicate: (Event) -> Bool) -> Int { events.filter(predicate).count }

    private func expire(_ id: UInt64, _ what: String) {
        waiters.removeValue(forKey: id)?.continuation.resume(throwing: TimedOut(description: "no \(what) after: \(events)"))
    }
}

public typealias PeripheralEventRecorder = EventRecorder<PeripheralEvent>
