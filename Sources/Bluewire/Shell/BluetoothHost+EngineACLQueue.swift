import BluewireATT
import BluewireCore
import BluewireHostEngine

extension BluetoothHost {
    /// `waitForACLQueue` on the engine backend: the engine's ACL queue of the link, re-checked at the
    /// end of every drain of the engine host (`EngineShellTap.drained`), which follows each Number Of
    /// Completed Packets (Core Vol 4 Part E §7.7.19) and each disconnection.
    func engineWaitForACLQueue(_ engineHost: EngineHost, of connection: UInt16, atMost: Int) async -> Bool {
        guard engineHasLink(engineHost, connection) else { return false }
        if engineQueuedACLPackets(engineHost, of: connection) <= atMost { return true }
        let id = nextObserverID
        nextObserverID += 1
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(returning: false)
                    return
                }
                aclQueueWaiters.append(ACLQueueWaiter(id: id, connection: connection, atMost: atMost, continuation: continuation))
            }
        } onCancel: {
            Task { await self.cancelACLQueueWaiter(id) }
        }
    }

    /// `performNow` from an async method of this host (the two share the executor).
    func enginePerformNow(_ engineHost: EngineHost, _ request: HostRequest) -> Result<HostCompletion, HostEngineError>? {
        engineHost.assumeIsolated { $0.performNow(request) }
    }

    func engineQueuedACLPackets(_ engineHost: EngineHost, of connection: UInt16) -> Int {
        engineHost.assumeIsolated { $0.engine.queuedACLPackets(connection: connection) }
    }

    func engineHasLink(_ engineHost: EngineHost, _ connection: UInt16) -> Bool {
        engineHost.assumeIsolated { $0.engine.connection(connection) != nil }
    }

    /// The controller's LE ACL data buffers, as the engine counts them (0 before `start()`).
    var engineACLBufferCount: Int { controller.map { Int($0.totalNumLEACLDataPackets) } ?? 0 }

    /// Resumes the waiters whose link's queue is short enough now, or whose link is gone (all of
    /// them once the engine host has finished).
    func engineResumeACLQueueWaiters() {
        guard !aclQueueWaiters.isEmpty else { return }
        guard let engineHost, phase != .closed else {
            let ended = aclQueueWaiters
            aclQueueWaiters.removeAll()
            for waiter in ended { waiter.continuation.resume(returning: false) }
            return
        }
        var index = 0
        while index < aclQueueWaiters.count {
            let waiter = aclQueueWaiters[index]
            if !engineHasLink(engineHost, waiter.connection) {
                aclQueueWaiters.remove(at: index).continuation.resume(returning: false)
            } else if engineQueuedACLPackets(engineHost, of: waiter.connection) <= waiter.atMost {
                aclQueueWaiters.remove(at: index).continuation.resume(returning: true)
            } else {
                index += 1
            }
        }
    }

    // MARK: the throughput sources

    /// `streamSequencedNotifications` on the engine backend: the engine's `.streamATT` of
    /// notifications, which keeps the link's ACL queue between one and two controller buffer counts
    /// long as the legacy loop did, and ends when the central unsubscribes, the link ends, the limit
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
        _ = engineHost?.assumeIsolated { $0.performNow(.stopATTStream(connection: connection, .notification)) }
    }

    /// `sendSequencedWriteCommands` on the engine backend: the legacy loop, each Write Command handed
    /// to the engine (`.attCommand`, which, like the legacy bearer, does not consult the peer's state
    /// machine) and the ACL queue read and waited for through the engine.
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
            guard await engineWaitForACLQueue(engineHost, of: connection, atMost: high / 2) else { break }
        }
        return .success(count)
    }
}

extension BluetoothHost {
    /// The engine host under this host on the engine backend (nil on the legacy one), for tests that
    /// set up through it what the shell does not forward yet (a server database, advertising) while
    /// the areas move (Docs/Design.md, "BluetoothHost over the engine").
    @_spi(Testing) public nonisolated var engineHostForTesting: EngineHost? { engineHost }
}
