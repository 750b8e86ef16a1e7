import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireL2CAP

/// The role the local device has on a connection (Core Vol 6 Part B §1.1).
public enum LinkRole: Sendable, Hashable {
    case central, peripheral
}

/// A notification or indication received from a peer's GATT server.
public struct GATTNotification: Sendable, Hashable {
    /// The characteristic value handle.
    public var handle: UInt16
    /// The value, a slice of the packet it arrived in (no copy).
    public var value: ArraySlice<UInt8>
    /// True for an indication (which the host has confirmed), false for a notification.
    public var isIndication: Bool

    @inlinable
    public init(handle: UInt16, value: ArraySlice<UInt8>, isIndication: Bool) {
        self.handle = handle
        self.value = value
        self.isIndication = isIndication
    }
}

/// Everything the Host keeps for one LE connection. Only touched on the Host's executor.
final class Link {
    let handle: UInt16
    let role: LinkRole
    let peer: BluetoothAddress
    var connectionInterval: UInt16
    var bearer: ATTBearer
    var signaling: LESignalingResponder
    /// The connection state machine of this link: for a link `connect(to:)` made, the peer's record,
    /// which outlives the link (`BluetoothHost.state(of:)`); for a link a central made to this host,
    /// or a late one the host drops, a record of the link's own.
    let peerState: PeerRecord
    var requestWaiters: [ATTRequestID: CheckedContinuation<Result<ATTPDU, ConnectionError>, Never>] = [:]
    /// Per value handle, then per subscriber id.
    var notificationSubscribers: [UInt16: [UInt64: AsyncStream<GATTNotification>.Continuation]] = [:]
    var allNotificationSubscribers: [UInt64: AsyncStream<GATTNotification>.Continuation] = [:]
    /// `GATTClient` subscriptions: per value handle, then per registration id.
    var notificationSinks: [UInt16: [UInt64: NotificationSink]] = [:]
    var disconnectWaiters: [CheckedContinuation<HCIStatus, Never>] = []
    var indicationWaiters: [ATTIndicationID: CheckedContinuation<Result<Void, ConnectionError>, Never>] = [:]
    /// The central-side GATT client of this link (operation queue, discovered database), see `GATTClient`.
    var gattClient: GATTClientSession?

    init(
        handle: UInt16, role: LinkRole, peer: BluetoothAddress, connectionInterval: UInt16, preferredMTU: UInt16,
        peerState: PeerRecord
    ) {
        self.handle = handle
        self.role = role
        self.peer = peer
        self.connectionInterval = connectionInterval
        self.bearer = ATTBearer(preferredMTU: preferredMTU, autoConfirmIndications: true)
        self.signaling = LESignalingResponder(role: role == .central ? .central : .peripheral)
        self.peerState = peerState
    }
}

/// Why an operation on a connection failed.
public enum ConnectionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The connection ended (reason as the controller reported it); every pending operation fails so.
    case disconnected(HCIStatus)
    /// The ATT bearer refused or failed the request (timeout, closed, PDU too long...).
    case att(ATTBearerError)
    /// The peer answered with an ATT Error Response.
    case attError(ATTErrorCode, request: ATTOpcode, handle: UInt16)
    /// The peer's response did not fit the procedure.
    case unexpectedResponse(ATTOpcode)
    /// A GATT procedure failed.
    case gatt(String)
    /// The connection state machine refused the operation in its current state.
    case refused(ConnectionTriggerRefused)
    /// The operation was cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .disconnected(let reason): "disconnected: \(reason)"
        case .att(let error): "ATT: \(error)"
        case .attError(let code, let request, let handle): "ATT error \(code) for \(request) on handle 0x\(hex(handle, width: 4))"
        case .unexpectedResponse(let opcode): "unexpected ATT response \(opcode)"
        case .gatt(let message): "GATT: \(message)"
        case .refused(let refusal): "\(refusal)"
        case .cancelled: "cancelled"
        }
    }
}
