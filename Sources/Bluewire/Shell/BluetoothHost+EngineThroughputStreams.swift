import BluewireATT
import BluewireCore
import BluewireHostEngine

/// The throughput sources (Throughput/BluetoothHost+ThroughputStream.swift).
extension BluetoothHost {
    /// `streamSequencedNotifications`: the engine's `.streamATT` of
    /// notifications, which keeps the link's ACL queue between one and two controller buffer counts
    /// long, and ends when the central unsubscribes, the link ends, the limit
    /// is reached or a new stream on the link replaces it. Cancelling the calling task stops it
    /// (`.stopATTStream`), unless a newer stream has taken the link since.
    func engineStreamSequencedNotifications(
        _ engineHost: EngineHost, _ valueHandle: UInt16, to connection: UInt16, payloadLength: Int?, firstSequence: UInt32, limit: Int?
    ) async -> Int {
        guard !Task.isCancelled else { return 0 }
        let token = nextObserverID
        nextObserverID += 1
        shell.notificationStreams[connection] = token
        let stream = ATTStream(pdu: .notification, valueHandle: valueHandle, length: payloadLength, firstSequence: firstSequence, limit: limit)
        let result = await withTaskCancellationHandler {
            await engineHost.perform(.streamATT(connection: connection, stream))
        } onCancel: {
            Task { await self.engineStopNotificationStream(connection, token: token) }
        }
        if shell.notificationStreams[connection] == token { shell.notificationStreams[connection] = nil }
        guard case .success(.streamed(let sent, _)) = result else { return 0 }
        return sent
    }

    func engineStopNotificationStream(_ connection: UInt16, token: UInt64) {
        guard shell.notificationStreams[connection] == token else { return }
        shell.notificationStreams[connection] = nil
        _ = engineHost.assumeIsolated { $0.performNow(.stopATTStream(connection: connection, .notification)) }
    }

    /// `sendSequencedWriteCommands`: each Write Command handed to the engine (`.attCommand`, which
    /// does not consult the peer's state machine) and the ACL queue read and waited for through the engine.
    func engineSendSequencedWriteCommands(
        _ engineHost: EngineHost, _ valueHandle: UInt16, on connection: UInt16, payloadLength: Int, limit: Int?,
        shouldStop: @Sendable () -> Bool, sent: @Sendable (Int) -> Void
    ) async -> Result<Int, ConnectionError> {
        var sequence: UInt32 = 0
        var count = 0
        let high = Swift.max(2 * engineACLBufferCount, 2)
        var value = ThroughputProfile.packet(sequence: 0, length: payloadLength)
        while !Task.isCancelled, !shouldStop() {
            guard engineHasLink(engineHost, connection) else { return .failure(.disconnected(.unknownConnectionIdentifier)) }
            while engineQueuedACLPackets(engineHost, of: connection) < high {
                if let limit, count >= limit { return .success(count) }
                ThroughputProfile.writeSequence(sequence, into: &value)
                let command = ATTPDU.writeCommand(handle: valueHandle, value: value[...])
                switch enginePerformNow(engineHost, .gatt(connection: connection, .attCommand(command))) {
                case .success?, nil:
                    break
                case .failure(.att(let error))?:
                    return .failure(.att(error))
                case .failure(.unknownConnection)?, .failure(.disconnected)?:
                    return .failure(.disconnected(.unknownConnectionIdentifier))
                case .failure(let error)?:
                    return .failure(.gatt("\(error)"))
                }
                sent(value.count)
                sequence &+= 1
                count += 1
            }
            guard await engineWaitForACLQueue(engineHost, of: connection, peer: nil, atMost: high / 2) else { break }
        }
        return .success(count)
    }
}
