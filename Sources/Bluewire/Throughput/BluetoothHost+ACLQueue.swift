import BluewireCore

/// A task waiting for a link's ACL queue to drain (`BluetoothHost.waitForACLQueue`).
struct ACLQueueWaiter {
    var id: UInt64
    var connection: UInt16
    /// The peer the link had when the wait began (nil for the bare-handle form): a waiter whose
    /// handle now names a link to another peer has lost its link.
    var peer: BluetoothAddress?
    var atMost: Int
    var continuation: CheckedContinuation<Bool, Never>
}

extension BluetoothHost {
    /// Suspends until at most `atMost` ACL packets of `connection` wait in the host for controller
    /// buffers (they leave as Number Of Completed Packets returns buffers, Core Vol 4 Part E §4.1.1).
    /// Returns true then, false later if the link ends or the task is cancelled.
    ///
    /// This is the flow control of a sender that wants to go as fast as the controller takes data
    /// without queueing without bound: send while the queue is short, then wait here.
    ///
    /// - Throws: when `connection` is not a live link of this host: its link ended, and its handle
    ///   may name a later link now (Core Vol 4 Part E §7.7.65.1).
    public func waitForACLQueue(of connection: Connection, atMost: Int) async throws(StaleConnectionError) -> Bool {
        let handle = try liveHandle(of: connection)
        return await engineWaitForACLQueue(engineHost, of: handle, peer: connection.peer, atMost: atMost)
    }

    /// Suspends until at most `atMost` ACL packets of the link with the HCI handle `connection` wait
    /// in the host for controller buffers (Core Vol 4 Part E §4.1.1). Returns true then, false at
    /// once or later if no link has the handle or the task is cancelled.
    ///
    /// The low-level form: a bare handle names whatever link has it, which may be a later link than
    /// the one it was taken from (Core Vol 4 Part E §7.7.65.1). Prefer `waitForACLQueue(of:atMost:)`
    /// with a `Connection`.
    public func waitForACLQueue(of connection: UInt16, atMost: Int) async -> Bool {
        await engineWaitForACLQueue(engineHost, of: connection, peer: nil, atMost: atMost)
    }

    /// ACL packets of `connection` waiting in the host for controller buffers.
    ///
    /// - Throws: when `connection` is not a live link of this host (Core Vol 4 Part E §7.7.65.1).
    public func queuedACLPackets(of connection: Connection) throws(StaleConnectionError) -> Int {
        engineQueuedACLPackets(engineHost, of: try liveHandle(of: connection))
    }

    /// ACL packets of the link with the HCI handle `connection` waiting in the host for controller
    /// buffers (0 when no link has it).
    ///
    /// The low-level form: a bare handle names whatever link has it now (Core Vol 4 Part E
    /// §7.7.65.1). Prefer `queuedACLPackets(of:)` with a `Connection`.
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
