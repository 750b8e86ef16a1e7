import BluewireCore
import BluewireGATT
import BluewireHCI

/// Why a peripheral-role operation (advertising, the GATT server) failed.
public enum PeripheralError: Error, Sendable, CustomStringConvertible {
    /// Advertising data or scan response data does not fit: legacy PDUs carry at most 31 octets of
    /// each (Core Vol 6 Part B §2.3.1), extended advertising what the controller reports in LE Read
    /// Maximum Advertising Data Length.
    case advertisingData(AdvertisingDataError, scanResponse: Bool)
    /// Extended advertising was asked for, but the controller lacks the feature or its commands.
    case extendedAdvertisingUnsupported
    /// Connectable extended advertising (non-legacy PDUs) cannot be scannable, so it has no scan
    /// response (Core Vol 4 Part E §7.8.53, Advertising_Event_Properties).
    case scanResponseNotAllowed
    /// The advertising interval is outside 0x0020…0x4000 (legacy) / 0x0020…0xFFFFFF (extended) units
    /// of 0.625 ms, or its minimum exceeds its maximum (Core Vol 4 Part E §7.8.5, §7.8.53).
    case invalidAdvertisingInterval(min: UInt32, max: UInt32)
    /// An HCI command failed, or the host is not running.
    case host(HostError)
    /// `notify` or `indicate` named a handle that is no characteristic value, or whose
    /// characteristic lacks Notify / Indicate.
    case server(GATTServerError)
    /// A database change was refused (unknown handle, value too long, dynamic value...).
    case database(GATTDatabaseError)
    /// A database file could not be read.
    case unreadableFile(path: String, reason: String)
    /// A database file is not a valid GATT database (with line and column).
    case databaseFile(path: String, GATTDatabaseFileError)
    /// `notify` or `indicate` named a `Connection` that is not a live link of this host: its link
    /// ended, and its handle may name a later link now (Core Vol 4 Part E §7.7.65.1).
    case staleConnection(StaleConnectionError)

    public var description: String {
        switch self {
        case .advertisingData(let error, let scanResponse):
            (scanResponse ? "scan response " : "") + error.description
        case .extendedAdvertisingUnsupported:
            "the controller does not support extended advertising"
        case .scanResponseNotAllowed:
            "connectable extended advertising has no scan response: put everything in the advertising data"
        case .invalidAdvertisingInterval(let min, let max):
            "invalid advertising interval \(min)…\(max) (units of 0.625 ms)"
        case .host(let error): error.description
        case .server(let error):
            switch error {
            case .notCharacteristicValue(let handle): "0x\(hex(handle, width: 4)) is not a characteristic value"
            case .notSupportedByCharacteristic(let handle):
                "the characteristic of 0x\(hex(handle, width: 4)) does not have that property or has no CCCD"
            }
        case .database(let error): error.description
        case .unreadableFile(let path, let reason): "\(path): \(reason)"
        case .databaseFile(let path, let error): "\(path): \(error)"
        case .staleConnection(let error): error.description
        }
    }
}
