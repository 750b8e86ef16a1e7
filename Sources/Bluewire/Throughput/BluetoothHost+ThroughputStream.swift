import BluewireATT
import BluewireCore

extension BluetoothHost {
    /// Notifies `valueHandle` to `connection` without pause while the central stays subscribed to
    /// notifications: each value `payloadLength` octets (by default ATT_MTU − 3, at most 512, re-read
    /// as the MTU changes) starting with its sequence number (`ThroughputProfile`), counting up from
    /// `firstSequence`, at most `limit` of them. Returns how many notifications were sent.
    ///
    /// It runs on the Host's executor and keeps the link's ACL queue between one and two controller
    /// buffer counts long, so the controller always has data for its next free buffer and the host
    /// never queues without bound. It stops when the central unsubscribes, the link ends, or the
    /// calling task is cancelled.
    ///
    /// - Throws: when `connection` is not a live link of this host: its link ended, and its handle
    ///   may name a later link now (Core Vol 4 Part E §7.7.65.1).
    public func streamSequencedNotifications(
        _ valueHandle: UInt16, to connection: Connection, payloadLength: Int? = nil, firstSequence: UInt32 = 0, limit: Int? = nil
    ) async throws(StaleConnectionError) -> Int {
        let handle = try liveHandle(of: connection)
        return await engineStreamSequencedNotifications(
            engineHost, valueHandle, to: handle, payloadLength: payloadLength, firstSequence: firstSequence, limit: limit)
    }

    /// `streamSequencedNotifications(_:to:payloadLength:firstSequence:limit:)` to the link with the
    /// HCI handle `connection` (0 notifications when no link has it).
    ///
    /// The low-level form: a bare handle names whatever link has it when the call runs, which may be
    /// a later link than the one it was taken from (Core Vol 4 Part E §7.7.65.1). Prefer the form
    /// that takes a `Connection`.
    public func streamSequencedNotifications(
        _ valueHandle: UInt16, to connection: UInt16, payloadLength: Int? = nil, firstSequence: UInt32 = 0, limit: Int? = nil
    ) async -> Int {
        await engineStreamSequencedNotifications(
            engineHost, valueHandle, to: connection, payloadLength: payloadLength, firstSequence: firstSequence, limit: limit)
    }
}
