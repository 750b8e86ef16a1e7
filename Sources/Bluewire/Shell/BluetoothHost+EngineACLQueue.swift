import BluewireCore
import BluewireHostEngine

extension BluetoothHost {
    /// `waitForACLQueue`: the engine's ACL queue of the link, re-checked at the
    /// end of every drain of the engine host (`EngineShellTap.drained`), which follows each Number Of
    /// Completed Packets (Core Vol 4 Part E §7.7.19) and each disconnection.
    func engineWaitForACLQueue(_ engineHost: EngineHost, of connection: UInt16, peer: BluetoothAddress?, atMost: Int) async -> Bool {
        guard engineHasLink(engineHost, connection), isLink(connection, to: peer) else { return false }
        if engineQueuedACLPackets(engineHost, of: connection) <= atMost { return true }
        let id = nextObserverID
        nextObserverID += 1
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if Task.isCancelled {
                    continuation.resume(returning: false)
                    return
                }
                aclQueueWaiters.append(ACLQueueWaiter(id: id, connection: connection, peer: peer, atMost: atMost, continuation: continuation))
                wantDrainedTaps()
                resumeDiagnosticsWaiters()
            }
        } onCancel: {
            Task { await self.cancelACLQueueWaiter(id) }
        }
    }

    /// `performNow` from this host's executor, which the engine host shares: every request the shell
    /// hands over synchronously goes through here.
    func enginePerformNow(_ engineHost: EngineHost, _ request: HostRequest) -> Result<HostCompletion, HostEngineError>? {
        engineHost.onSharedExecutor(passing: request) { $0.performNow($1) }
    }

    func engineQueuedACLPackets(_ engineHost: EngineHost, of connection: UInt16) -> Int {
        engineHost.onSharedExecutor(passing: connection) { $0.engine.queuedACLPackets(connection: $1) }
    }

    func engineHasLink(_ engineHost: EngineHost, _ connection: UInt16) -> Bool {
        engineHost.onSharedExecutor(passing: connection) { $0.engine.connection($1) != nil }
    }

    /// The controller's LE ACL data buffers, as the engine counts them (0 before `start()`).
    var engineACLBufferCount: Int { controller.map { Int($0.totalNumLEACLDataPackets) } ?? 0 }

    /// Resumes the waiters whose link's queue is short enough now, or whose link is gone (all of
    /// them once the engine host has finished).
    func engineResumeACLQueueWaiters() {
        defer { wantDrainedTaps() }
        guard !aclQueueWaiters.isEmpty else { return }
        guard phase != .closed else {
            let ended = aclQueueWaiters
            aclQueueWaiters.removeAll()
            for waiter in ended { waiter.continuation.resume(returning: false) }
            return
        }
        var index = 0
        while index < aclQueueWaiters.count {
            let waiter = aclQueueWaiters[index]
            if !engineHasLink(engineHost, waiter.connection) || !isLink(waiter.connection, to: waiter.peer) {
                aclQueueWaiters.remove(at: index).continuation.resume(returning: false)
            } else if engineQueuedACLPackets(engineHost, of: waiter.connection) <= waiter.atMost {
                aclQueueWaiters.remove(at: index).continuation.resume(returning: true)
            } else {
                index += 1
            }
        }
    }
}
