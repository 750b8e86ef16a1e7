import BluewireCore
import BluewireHCI

/// What happened to the peripheral map, in the order it happened (`PeripheralMap.events`).
///
/// A peripheral goes `discovered` → `connecting` → `ready`, and later maybe `disconnected`; or it
/// ends at `failed` (connecting or discovery failed). `scanFinished` comes once, after the last
/// `discovered`: from then on the set of entries is fixed, so an application that waits for every
/// entry to be ready, failed or disconnected knows when it has seen them all.
public enum PeripheralMapEvent: Sendable, CustomStringConvertible {
    /// An advertiser matching the map's filter, seen for the first time: it has an entry now.
    case discovered(DiscoveredDevice)
    /// The scan is over: `found` are the entries' addresses in discovery order (at most the map's
    /// limit). `error` is set when the scan itself failed (then `found` is what came before).
    case scanFinished(found: [BluetoothAddress], error: PeripheralMapError?)
    /// LE Create Connection is going out to this peripheral.
    case connecting(BluetoothAddress)
    /// The entry is connected, its MTU exchanged and its services and characteristics discovered:
    /// its proxies can be used from now on.
    case ready(MappedPeripheral)
    /// The link to this peripheral ended, with the reason the controller gave (Core Vol 1 Part F),
    /// e.g. Remote User Terminated Connection when the peripheral hung up.
    case disconnected(BluetoothAddress, reason: HCIStatus)
    /// Connecting or discovery failed; the entry is given up.
    case failed(BluetoothAddress, PeripheralMapError)

    public var description: String {
        switch self {
        case .discovered(let device): "discovered \(device.address)\(device.name.map { " \"\($0)\"" } ?? "")"
        case .scanFinished(let found, let error): "scan finished: \(found.count) found\(error.map { ", \($0)" } ?? "")"
        case .connecting(let address): "connecting \(address)"
        case .ready(let peripheral): "ready \(peripheral.address) (\(peripheral.services.count) services, mtu \(peripheral.mtu))"
        case .disconnected(let address, let reason): "disconnected \(address): \(reason)"
        case .failed(let address, let error): "failed \(address): \(error)"
        }
    }
}
