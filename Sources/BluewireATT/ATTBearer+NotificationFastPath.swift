import BluewireCore

extension ATTBearer {
    /// Takes a Handle Value Notification (Core Vol 3 Part F §3.4.7.1) without the output queue:
    /// the attribute handle and the value (a slice of `bytes`), when `bytes` is one and `receive`
    /// would have done nothing with it but emit `.notification`; nil otherwise, and then the caller
    /// gives the PDU to `receive` as usual.
    ///
    /// A notification is the one PDU a client receives at a high rate, and it changes no bearer
    /// state: it is no transaction, needs no confirmation (§3.4.7.1) and may arrive at any time,
    /// even while a request is outstanding (§3.3.2). So the fast path needs only what `receive`
    /// checks first: the bearer is not closed, no transaction timed out at `now` (that closes the
    /// bearer, §3.3.3, and must be reported first), and no earlier output waits to be taken (the
    /// notification must not overtake it). The PDU needs its opcode and a 2-octet handle; the value
    /// is the rest, empty included.
    public mutating func receiveNotification(
        _ bytes: ArraySlice<UInt8>, now: MonotonicInstant
    ) -> (handle: UInt16, value: ArraySlice<UInt8>)? {
        let start = bytes.startIndex
        guard bytes.count >= 3, bytes[start] == ATTOpcode.handleValueNotification.rawValue,
              closeReason == nil, outputHead == outputs.count
        else { return nil }
        if let deadline, now >= deadline { return nil }
        let handle = UInt16(bytes[start + 1]) | UInt16(bytes[start + 2]) << 8
        return (handle, bytes[(start + 3)...])
    }
}
