import Testing

@testable import BluewireTransport

/// `SingleConsumerQueue.yield(contentsOf:)`: a burst goes in under one lock, in order, with one
/// wake-up of a waiting consumer, and the consumer takes the rest without waiting.
@Suite("Single-consumer queue: bursts")
struct SingleConsumerQueueBatchTests {
    @Test("a burst yielded to an idle queue comes out in order, then later yields after it")
    func burstThenSingles() async {
        let queue = SingleConsumerQueue<Int, Never>()
        queue.yield(contentsOf: [1, 2, 3])
        queue.yield(4)
        queue.yield(contentsOf: [5, 6][...])
        var received: [Int] = []
        for _ in 0..<6 { if let value = await queue.next() { received.append(value) } }
        #expect(received == [1, 2, 3, 4, 5, 6])
    }

    @Test("a waiting consumer is handed the burst's first element; the rest are buffered for takeBuffered, in order")
    func wakesWaiterOnce() async {
        let queue = SingleConsumerQueue<Int, Never>()
        async let first = queue.next()
        // Until the consumer waits: yield nothing before then, or it would not be the waiter's.
        while queue.state.withLock({ $0.waiters.isEmpty }) { await Task.yield() }
        queue.yield(contentsOf: [10, 11, 12])
        #expect(await first == 10)
        var rest: [Int] = [99]
        queue.takeBuffered(into: &rest)
        #expect(rest == [11, 12])
    }

    @Test("an empty burst changes nothing, and a burst after finish is ignored")
    func emptyAndFinished() async {
        let queue = SingleConsumerQueue<Int, Never>()
        queue.yield(contentsOf: [Int]())
        queue.yield(1)
        queue.finish()
        queue.yield(contentsOf: [2, 3])
        #expect(await queue.next() == 1)
        #expect(await queue.next() == nil)
    }
}
