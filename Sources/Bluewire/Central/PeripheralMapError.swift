import BluewireCore
import BluewireHCI
import BluewireHostEngine

/// Why the peripheral map could not scan, connect or discover, or why a lookup through one of its
/// entries failed. Each case names the peripheral or UUID concerned, so a person can act on it.
public enum PeripheralMapError: Error, Sendable, CustomStringConvertible {
    /// The scan for matching advertisers failed (the Host is not running, another scan is running,
    /// the controller refused to scan).
    case scan(HostEngineError)
    /// Connecting to the peripheral failed (timeout, the controller's status, no room for one more
    /// link).
    case connect(BluetoothAddress, HostEngineError)
    /// The MTU exchange or the service/characteristic discovery failed; the map dropped the link,
    /// since an entry without its database cannot be used through the map.
    case discovery(BluetoothAddress, GATTError)
    /// The peripheral does not have a service the map was told to require (`PeripheralMap.Options.services`).
    case serviceMissing(BluetoothAddress, BluetoothUUID)
    /// A lookup through an entry found no such service or characteristic.
    case notFound(BluetoothAddress, BluetoothUUID)
    /// The map was started twice (a map runs one scan-and-connect pass).
    case alreadyStarted

    /// Whether the failure is the link going away (reported as `disconnected`, not `failed`).
    public var isDisconnection: Bool {
        if case .discovery(_, let error) = self { return error.isDisconnection }
        return false
    }

    public var description: String {
        switch self {
        case .scan(let error): "scanning failed: \(error)"
        case .connect(let address, let error): "\(address): \(error)"
        case .discovery(let address, let error): "\(address): discovery failed: \(error)"
        case .serviceMissing(let address, let uuid): "\(address) has no service \(uuid)"
        case .notFound(let address, let uuid): "\(address) has no discovered \(uuid)"
        case .alreadyStarted: "the peripheral map has already been started"
        }
    }
}
