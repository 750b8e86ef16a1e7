extension Array {
    /// Takes the element at `head` out of a queue read front to back, or nil when every element has
    /// been taken: the slot keeps `placeholder` (so the element is moved, not copied: no retain here
    /// and release when the buffer is cleared), `head` moves on, and once it reaches the end the array
    /// is emptied with its capacity kept, so a queue in steady state allocates nothing.
    /// `HostEngine`'s output queue and notification lane, and `ATTBearer`'s outputs, drain this way.
    ///
    /// The emptying removes from the back one element at a time: these queues hold a few elements
    /// at a time, and `removeAll(keepingCapacity:)` goes through the general `replaceSubrange`,
    /// which Benchmarks/NotificationPath measured at several percent of a notification's time.
    @inlinable
    package mutating func takeFront(at head: inout Int, leaving placeholder: Element) -> Element? {
        guard head < count else { return nil }
        var element = placeholder
        swap(&element, &self[head])
        head += 1
        if head == count {
            while !isEmpty { removeLast() }
            head = 0
        }
        return element
    }
}
