import BluewireCore

/// A task waiting for a link's ACL queue to drain (`BluetoothHost.waitForACLQueue`).
struct ACLQueueWaiter {
    var id: UInt64
    var connection: UInt16
    var atMost: Int
    var continuation: CheckedContinuation<Bool, Never>
}

extension BluetoothHost {
    /// Suspends until at most `atMost` ACL packets of `connection` wait in the host for controller
    /// buffers (they leave as Number Of Completed Packets returns buffers, Core Vol 4 Part E §4.1.1).
    /// Returns true then, false at once or later if the link is gone or the task is cancelled.
    ///
    /// This is the flow control of a sender that wants to go as fast as the controller takes data
    /// without queueing without bound: send while the queue is short, then wait here.
    public func waitForACLQueue(of connection: UInt16, atMost: Int) async -> Bool {
        await engineWaitForACLQueue(engineHost, of: connection, atMost: atMost)
    }

    /// ACL packets of `connection` waiting in the host for controller buffers.
    public func queuedACLPackets(of connection: UInt16) -> Int {
        engineQueuedACLPackets(engineHost, of: connection)
    }

    /// The controller's LE ACL data buffers (LE Read Buffer Size), 0 before `start()`.
    public var aclBufferCount: Int { engineACLBufferCount }

    func cancelACLQueueWaiter(_ id: UInt64) {
        guard let index = aclQueueWaiters.firstIndex(where: { $0.id == id }) else { return }
        aclQueueWaiters.remove(at: index).continuation.resume(returning: false)
    }
}
