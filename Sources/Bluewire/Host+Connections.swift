import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI

extension BluetoothHost {
    /// Connects to a peripheral as central (LE Create Connection, or LE Extended Create Connection
    /// when the controller supports it), waiting at most `timeout` (the configuration's by default)
    /// for the connection to complete; on timeout the attempt is cancelled. Cancelling the calling
    /// task cancels the attempt too (LE Create Connection Cancel) and throws
    /// `.connectionFailed(peer, .operationCancelledByHost)`.
    ///
    /// The attempt goes through the peer's connection state machine (`state(of:)`, Docs/Design.md):
    /// `Connect` now (Disconnected.Initial, or Scanning while a scan runs, → Connecting), `Connected`
    /// on LE Connection Complete (→ Connected.Idle). A cancelled attempt fires `Disconnect` (back to
    /// Initial: the application asked for it, nothing failed); an attempt that failed (an error status,
    /// the timeout, LE Create Connection refused, a Hardware Error) fires `Failure` and leaves the
    /// peer in Error with the cause (`failure(of:)`) until `reset(_:)`. `connect` is refused with
    /// `.refused` while the peer is connected (or its link is still ending) and while it is in Error.
    ///
    /// Where the controller supports them, the link is set up for throughput (the engine does it):
    /// 2M PHY preferred, data length raised to 251 octets. Controllers that refuse either keep the
    /// defaults; that never fails the connection.
    public func connect(
        to peer: BluetoothAddress,
        parameters: LEConnectionParameters = LEConnectionParameters(),
        timeout: TimeSpan? = nil
    ) async throws(HostError) -> Connection {
        shell.connectingPeer = peer
        defer { shell.connectingPeer = nil }
        return try await engineConnect(engineHost, to: peer, parameters: parameters, timeout: timeout)
    }

    /// Cancels a connection attempt in progress (LE Create Connection Cancel); its `connect` throws
    /// `.connectionFailed(peer, .operationCancelledByHost)`. Nothing happens if none is in progress.
    public func cancelConnectionAttempt() {
        engineCancelConnect()
    }

    /// True from the moment `connect` is called until its attempt succeeded, failed or was cancelled.
    public var isConnecting: Bool { shell.connectingPeer != nil }

    /// Disconnects (HCI Disconnect) and waits for Disconnection Complete. Reason defaults to Remote
    /// User Terminated Connection (0x13), as Core Vol 4 Part E §7.1.6 suggests for a user's request.
    public func disconnect(handle: UInt16, reason: HCIStatus = .remoteUserTerminatedConnection) async throws(HostError) {
        try await engineDisconnect(engineHost, handle: handle, reason: reason)
    }

    /// Open connections.
    public var connections: [Connection] {
        engineConnections(engineHost)
    }
}
