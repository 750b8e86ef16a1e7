import BluewireCore
import BluewireGATT
import BluewireHCI

/// What an application asks the engine to do. Each request is handed in with a caller-chosen
/// `HostRequestID`, and finishes with exactly one `.completed` output carrying that ID.
public enum HostRequest: Hashable, Sendable {
    /// Bring the controller up (Reset ... LE Set Random Address; see `ControllerBringUp`).
    case start
    /// Start scanning; reports arrive as `.deviceFound` events. Completes once the controller scans.
    case startScan(ScanParameters, filter: AdvertisingFilter)
    /// Stop scanning. Runs after any start already requested, so the controller ends up not scanning.
    case stopScan
    /// Create a connection as central (§7.8.12 / §7.8.66). Completes with `.connected` or an error.
    case connect(BluetoothAddress, LEConnectionParameters)
    /// Cancel the connection attempt in progress (§7.8.13). The attempt completes with `.cancelled`.
    case cancelConnect
    /// Disconnect a link (§7.1.6). Completes with the reason once Disconnection Complete arrives.
    case disconnect(handle: UInt16, reason: HCIStatus)
    /// Configure and enable advertising (legacy or extended commands, as the controller supports).
    case startAdvertising(HostAdvertisement)
    /// Disable advertising; no readvertising after disconnections either.
    case stopAdvertising
    /// Notify `value` on a characteristic to every subscribed central (or only `connection`).
    case notify(valueHandle: UInt16, value: [UInt8], connection: UInt16?)
    /// Indicate `value` on one connection; completes when the central confirms (§3.4.7.2).
    case indicate(valueHandle: UInt16, value: [UInt8], connection: UInt16)
    /// A GATT client operation on a link, queued behind the link's earlier ones (one ATT request at a time).
    case gatt(connection: UInt16, GATTClientRequest)
    /// Pair on a link (Core Vol 3 Part H §2.3): as central send a Pairing Request, as peripheral a Security
    /// Request (§3.6.7). Needs `configureSecurity`. Completes with `.secured(level)` once the link is
    /// encrypted and the keys are distributed (the `.paired` event carries them).
    case pair(connection: UInt16)
    /// Central: encrypt the link with the bonded peer's key, without pairing (§2.4.4). Completes with
    /// `.secured(level)` on Encryption Change, or fails (`.security(.notBonded)`, `.encryptionFailed`).
    case encrypt(connection: UInt16)
    /// Answer a `.passkeyRequest` event with the passkey the other device shows, or nil to refuse.
    case passkeyReply(connection: UInt16, passkey: UInt32?)
    /// Answer a `.numericComparison` event: true when both devices show the same number.
    case confirmReply(connection: UInt16, accepted: Bool)
}

/// GATT client operations (Core Vol 3 Part G §4).
public enum GATTClientRequest: Hashable, Sendable {
    /// Discover all primary services, their characteristics and descriptors (§4.4.1, §4.6.1, §4.7.1).
    case discoverAll
    /// Read Characteristic Value (§4.8.1).
    case read(handle: UInt16)
    /// Read Long Characteristic Values (§4.8.3).
    case readLong(handle: UInt16)
    /// Write Characteristic Value (§4.9.3); the value must fit one Write Request (ATT_MTU − 3).
    case write(handle: UInt16, value: [UInt8])
    /// Write Without Response (§4.9.1): completes as soon as the command is queued.
    case writeWithoutResponse(handle: UInt16, value: [UInt8])
    /// Write the CCCD to enable notifications (or indications) (§4.12.3).
    case subscribe(GATTCharacteristic, indications: Bool, descriptorHandle: UInt16?)
    /// Write 0x0000 to the CCCD (§4.12.3).
    case unsubscribe(GATTCharacteristic, descriptorHandle: UInt16?)
    /// Exchange MTU (§4.3.1); completes with the ATT_MTU in use.
    case exchangeMTU
}

/// What to advertise (Core Vol 3 Part C §11, Vol 4 Part E §7.8.5-9, §7.8.53-56).
public struct HostAdvertisement: Hashable, Sendable {
    public enum CommandSet: Hashable, Sendable { case automatic, legacy, extended }

    public var data: [ADElement]
    public var scanResponse: [ADElement]
    public var isConnectable: Bool
    /// Advertising interval bounds in units of 0.625 ms.
    public var intervalMin: UInt32
    public var intervalMax: UInt32
    public var commandSet: CommandSet
    /// Keep advertising while a central is connected (else resume only once no central is left).
    public var advertisesWhileConnected: Bool

    public init(
        data: [ADElement], scanResponse: [ADElement] = [], isConnectable: Bool = true,
        intervalMin: UInt32 = 0x00A0, intervalMax: UInt32 = 0x00A0, commandSet: CommandSet = .automatic,
        advertisesWhileConnected: Bool = false
    ) {
        self.data = data
        self.scanResponse = scanResponse
        self.isConnectable = isConnectable
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.commandSet = commandSet
        self.advertisesWhileConnected = advertisesWhileConnected
    }

    /// Flags (LE General Discoverable, BR/EDR not supported), the complete local name and the
    /// service UUIDs: what a peripheral usually advertises.
    public static func named(_ name: String, services: [BluetoothUUID] = []) -> HostAdvertisement {
        var data: [ADElement] = [.flags([.leGeneralDiscoverableMode, .brEdrNotSupported])]
        if !services.isEmpty { data.append(.serviceUUIDs(services, complete: true)) }
        data.append(.completeLocalName(name))
        return HostAdvertisement(data: data)
    }
}
