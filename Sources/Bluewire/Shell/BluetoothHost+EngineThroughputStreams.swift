import BluewireATT
import BluewireCore
import BluewireHostEngine

/// The throughput sources (Throughput/BluetoothHost+ThroughputStream.swift, ThroughputClient's Write
/// Commands): the engine's `.streamATT`, which keeps the link's ACL queue between one and two
/// controller buffer counts long as Number Of Completed Packets returns buffers (Core Vol 4 Part E
/// §4.1.1), so nothing here runs per packet.
extension BluetoothHost {
    /// `streamSequencedNotifications`: a stream of notifications, which ends when the central
    /// unsubscribes, the link ends, the limit is reached or a new stream on the link replaces it.
    func engineStreamSequencedNotifications(
        _ engineHost: EngineHost, _ valueHandle: UInt16, to connection: UInt16, payloadLength: Int?, firstSequence: UInt32, limit: Int?
    ) async -> Int {
        let stream = ATTStream(pdu: .notification, valueHandle: valueHandle, length: payloadLength, firstSequence: firstSequence, limit: limit)
        guard case .success(let streamed) = await engineRunATTStream(engineHost, stream, on: connection) else { return 0 }
        return streamed.sent
    }

    /// `ThroughputClient`'s Write Commands: a stream of them on `connection` while it is the link
    /// `identity` names, until its limit, `.stopATTStream`, or the link's end. The values sent, and
    /// why the stream ended; the stream completes once the controller has taken what it queued.
    func streamWriteCommands(
        _ stream: ATTStream, on connection: UInt16, link identity: LinkIdentity
    ) async throws(ConnectionError) -> (sent: Int, end: ATTStreamEnd) {
        guard isLink(connection, identity) else { throw .disconnected(endedReason(connection)) }
        switch await engineRunATTStream(engineHost, stream, on: connection) {
        case .success(let streamed): return streamed
        case .failure(let error): throw engineConnectionError(error, handle: connection)
        }
    }

    /// Ends the running stream of `pdu` on `connection` while it is the link `identity` names (any
    /// link with the handle when nil), with `.stopATTStream`: its call returns once the controller
    /// has taken what it queued.
    func stopATTStream(on connection: UInt16, _ pdu: ATTStream.PDU, link identity: LinkIdentity? = nil) {
        guard isLink(connection, identity) else { return }
        _ = enginePerformNow(engineHost, .stopATTStream(connection: connection, pdu))
    }

    /// Values the running stream of `pdu` on `connection` has handed to the ACL queue; nil when none
    /// runs or the link is not the one `identity` names.
    func attStreamSent(on connection: UInt16, _ pdu: ATTStream.PDU, link identity: LinkIdentity) -> Int? {
        guard isLink(connection, identity) else { return nil }
        return engineHost.onSharedExecutor(passing: (connection, pdu)) { $0.engine.attStreamSent(connection: $1.0, pdu: $1.1) }
    }

    /// Runs `stream` on `connection` until it ends. Cancelling the calling task stops it
    /// (`.stopATTStream`), unless a newer stream of the same PDU has taken the link since.
    func engineRunATTStream(
        _ engineHost: EngineHost, _ stream: ATTStream, on connection: UInt16
    ) async -> Result<(sent: Int, end: ATTStreamEnd), HostEngineError> {
        guard !Task.isCancelled else { return .failure(.cancelled) }
        let key = ShellATTStreamKey(connection: connection, pdu: stream.pdu)
        let token = nextObserverID
        nextObserverID += 1
        shell.attStreams[key] = token
        let result = await withTaskCancellationHandler {
            await engineHost.perform(.streamATT(connection: connection, stream))
        } onCancel: {
            Task { await self.engineStopATTStream(key, token: token) }
        }
        if shell.attStreams[key] == token { shell.attStreams[key] = nil }
        switch result {
        case .success(.streamed(let sent, let end)): return .success((sent, end))
        case .success: return .success((0, .stopped))
        case .failure(let error): return .failure(error)
        }
    }

    func engineStopATTStream(_ key: ShellATTStreamKey, token: UInt64) {
        guard shell.attStreams[key] == token else { return }
        shell.attStreams[key] = nil
        stopATTStream(on: key.connection, key.pdu)
    }
}
