import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine

/// Why a throughput run could not be made or finished.
public enum ThroughputError: Error, Sendable, CustomStringConvertible {
    /// No characteristic with this value handle (or, without one, no throughput service characteristic
    /// for the mode) in the peer's database.
    case characteristicNotFound(handle: UInt16?, mode: ThroughputMode)
    /// The characteristic lacks the property the mode needs.
    case propertyMissing(handle: UInt16, needed: CharacteristicProperties, mode: ThroughputMode)
    /// The payload length asked for does not fit: at least 4 octets (the sequence number), at most
    /// ATT_MTU − 3 and 512 (the longest attribute value).
    case payloadLength(Int, maximum: Int)
    /// A GATT operation failed (discovery, subscription, a write, the sink report).
    case gatt(GATTError)
    /// The link ended during the run.
    case disconnected(HCIStatus)
    /// Sending failed on the connection (ATT bearer closed...).
    case connection(ConnectionError)
    /// The credit based channel (l2cap mode) could not be opened or ended with an error.
    case channel(L2CAPChannelError)
    /// The mode does not run over GATT (`l2cap`: use `ChannelThroughput` on an `EngineHost`).
    case notGATT(ThroughputMode)
    /// A request to the host engine failed (`EngineThroughputClient`: discovery, a GATT operation,
    /// the stream of Write Commands).
    case engine(HostEngineError)

    public var description: String {
        switch self {
        case .characteristicNotFound(let handle?, let mode):
            "no characteristic with value handle 0x\(hex(handle, width: 4)) for \(mode.rawValue) on the peer"
        case .characteristicNotFound(nil, let mode):
            "the peer has no throughput service characteristic for \(mode.rawValue) (give --handle)"
        case .propertyMissing(let handle, let needed, let mode):
            "characteristic 0x\(hex(handle, width: 4)) lacks \(Self.name(needed)), which \(mode.rawValue) needs"
        case .payloadLength(let length, let maximum):
            "payload length \(length) does not fit: 4...\(maximum) octets (ATT_MTU - 3, at most 512)"
        case .gatt(let error): "\(error)"
        case .disconnected(let reason): "disconnected: \(reason)"
        case .connection(let error): "\(error)"
        case .channel(let error): "channel: \(error)"
        case .notGATT(let mode): "\(mode.rawValue) does not run over GATT"
        case .engine(.gatt(let error)): "\(error)"
        case .engine(.att(let error)): "\(error)"
        case .engine(let error): "\(error)"
        }
    }

    static func name(_ property: CharacteristicProperties) -> String {
        switch property {
        case .notify: "Notify"
        case .writeWithoutResponse: "Write Without Response"
        case .write: "Write"
        default: "property 0x\(hex(property.rawValue, width: 2))"
        }
    }
}
