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
    public func streamSequencedNotifications(
        _ valueHandle: UInt16, to connection: UInt16, payloadLength: Int? = nil, firstSequence: UInt32 = 0, limit: Int? = nil
    ) async -> Int {
        if let engineHost {
            return await engineStreamSequencedNotifications(
                engineHost, valueHandle, to: connection, payloadLength: payloadLength, firstSequence: firstSequence, limit: limit)
        }
        var sequence = firstSequence
        var sent = 0
        let high = Swift.max(2 * aclCredits.totalBuffers, 2)
        while !Task.isCancelled, links[connection] != nil,
              gattServer.subscription(connection: connection, valueHandle: valueHandle).notifications {
            let length = payloadLength ?? ThroughputProfile.maximumPayloadLength(mtu: gattServer.mtu(for: connection))
            while aclCredits.queuedCount(handle: connection) < high {
                // A stream replaced by a new one (re-subscription) must not interleave with it.
                guard !Task.isCancelled else { return sent }
                if let limit, sent >= limit { return sent }
                let notified: [UInt16]
                do {
                    notified = try notify(valueHandle, value: ThroughputProfile.packet(sequence: sequence, length: length), to: connection)
                } catch {
                    return sent
                }
                guard !notified.isEmpty else { return sent }
                sequence &+= 1
                sent += 1
            }
            guard await waitForACLQueue(of: connection, atMost: high / 2) else { break }
        }
        return sent
    }

    /// Sends Write Commands (Write Without Response) of `payloadLength` octets to `valueHandle` on
    /// `connection`, numbered from `firstSequence`, as fast as the controller's ACL buffers take them
    /// (the same flow control as `streamSequencedNotifications`), until `shouldStop` says so, `limit`
    /// packets are sent, the link ends or the task is cancelled. `sent` is called for each packet
    /// with its length; it and `shouldStop` run on the Host's executor and must not block.
    func sendSequencedWriteCommands(
        _ valueHandle: UInt16, on connection: UInt16, payloadLength: Int, limit: Int?,
        shouldStop: @Sendable () -> Bool, sent: @Sendable (Int) -> Void
    ) async -> Result<Int, ConnectionError> {
        if let engineHost {
            return await engineSendSequencedWriteCommands(
                engineHost, valueHandle, on: connection, payloadLength: payloadLength, limit: limit, shouldStop: shouldStop, sent: sent)
        }
        var sequence: UInt32 = 0
        var count = 0
        let high = Swift.max(2 * aclCredits.totalBuffers, 2)
        var value = ThroughputProfile.packet(sequence: 0, length: payloadLength)
        while !Task.isCancelled, !shouldStop() {
            guard let link = links[connection] else { return .failure(.disconnected(.unknownConnectionIdentifier)) }
            while aclCredits.queuedCount(handle: connection) < high {
                if let limit, count >= limit { return .success(count) }
                ThroughputProfile.writeSequence(sequence, into: &value)
                do throws(ATTBearerError) {
                    try link.bearer.send(command: .writeCommand(handle: valueHandle, value: value[...]))
                } catch {
                    return .failure(.att(error))
                }
                drainBearer(handle: connection)
                sent(value.count)
                sequence &+= 1
                count += 1
            }
            guard await waitForACLQueue(of: connection, atMost: high / 2) else { break }
        }
        return .success(count)
    }
}
