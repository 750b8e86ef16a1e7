import BluewireATT
import BluewireCore

/// Which GATT server of a connection an ATT PDU concerns. Both devices of a link may run one; their
/// handle spaces are unrelated (Core Vol 3 Part G §2.2: client and server roles are per request).
public enum GATTServerSide: Sendable, Hashable {
    /// The peer device's server: the local device sent the requests.
    case peer
    /// The local device's server: the peer sent the requests.
    case local

    public var name: String { self == .peer ? "peer" : "local" }
}

/// One GATT server of a connection as the capture shows it: what discovery revealed of its table and
/// what was done to each of its attributes.
public struct ObservedGATTServer: Sendable {
    public var side: GATTServerSide
    public internal(set) var table = DiscoveredGATTTable()
    /// Per attribute handle; only handles something happened to.
    public internal(set) var activity: [UInt16: AttributeActivity] = [:]
    /// Requests the server answered (responses and error responses) and requests left unanswered
    /// when a new one arrived.
    public internal(set) var answeredRequests = 0
    public internal(set) var unansweredRequests = 0

    /// The client's outstanding request: ATT allows one per client (Core Vol 3 Part F §3.3.2), so a
    /// response always answers the last request sent to this server.
    var pending: PendingATTRequest?
    /// Prepare Write Requests queued at the server until Execute Write (§3.4.6).
    var preparedParts: [PreparedWritePart] = []

    public init(side: GATTServerSide) {
        self.side = side
    }

    /// The activity of `handle`, or an empty record.
    public func activity(of handle: UInt16) -> AttributeActivity {
        activity[handle] ?? AttributeActivity(handle: handle)
    }

    /// Handles with activity, ascending.
    public var activeHandles: [UInt16] { activity.keys.sorted() }

    mutating func update(_ handle: UInt16, _ body: (inout AttributeActivity) -> Void) {
        body(&activity[handle, default: AttributeActivity(handle: handle)])
    }

    mutating func expect(_ request: PendingATTRequest) {
        if pending != nil { unansweredRequests += 1 }
        pending = request
    }

    /// Takes the outstanding request for a response; nil for a response nobody asked for (capture
    /// started after the request).
    mutating func takePending() -> PendingATTRequest? {
        let request = pending
        pending = nil
        if request != nil { answeredRequests += 1 }
        return request
    }
}

/// A request waiting for its response; only what the response needs to be understood.
enum PendingATTRequest: Sendable, Hashable {
    case exchangeMTU
    case findInformation
    case findByTypeValue(attributeType: UInt16, value: [UInt8])
    case readByType(BluetoothUUID)
    case read(handle: UInt16)
    case readBlob(handle: UInt16, offset: UInt16)
    case readMultiple([UInt16])
    case readMultipleVariable([UInt16])
    case readByGroupType(BluetoothUUID)
    case write(handle: UInt16)
    case prepareWrite
    case executeWrite
}

/// One part of a prepared write (§3.4.6.1).
struct PreparedWritePart: Sendable, Hashable {
    var handle: UInt16
    var offset: Int
    var value: [UInt8]
}
