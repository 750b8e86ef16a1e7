import BluewireCore
import BluewireGATT
import BluewireHCI

/// One peripheral of a `PeripheralMap`: what it advertised, its link, and proxies for the services
/// and characteristics discovered on it. A value: the map hands out a snapshot with each
/// `ready` event and from `PeripheralMap.entries`; the proxies keep working as long as the link is
/// up (after that, every operation throws `GATTError.disconnected(reason)`).
public struct MappedPeripheral: Sendable, CustomStringConvertible {
    /// Where an entry is in its life.
    public enum State: Sendable, Equatable, CustomStringConvertible {
        /// Seen advertising; not connected yet.
        case discovered
        /// LE Create Connection is out.
        case connecting
        /// Connected; MTU exchange and discovery running.
        case discovering
        /// Connected and discovered: the proxies can be used.
        case ready
        /// The link ended with this reason.
        case disconnected(HCIStatus)
        /// Connecting or discovery failed (see the `failed` event for the error).
        case failed

        public var description: String {
            switch self {
            case .discovered: "discovered"
            case .connecting: "connecting"
            case .discovering: "discovering"
            case .ready: "ready"
            case .disconnected(let reason): "disconnected (\(reason))"
            case .failed: "failed"
            }
        }
    }

    /// The peripheral's address: the map's key.
    public let address: BluetoothAddress
    /// The advertised local name, if any.
    public internal(set) var name: String?
    /// The latest advertising report (nil for an entry given by address, not scanned).
    public internal(set) var advertisement: DiscoveredDevice?
    public internal(set) var state: State
    /// The link, once connected.
    public internal(set) var connection: EngineConnection?
    /// The ATT_MTU in force after the exchange (23 before).
    public internal(set) var mtu: Int = 23
    /// The discovered services, in handle order (empty until ready).
    public internal(set) var services: [MappedService] = []

    init(address: BluetoothAddress, advertisement: DiscoveredDevice?) {
        self.address = address
        self.advertisement = advertisement
        self.name = advertisement?.name
        self.state = .discovered
    }

    /// The discovered service with `uuid`.
    /// - Throws: `.notFound(address, uuid)`.
    public func service(_ uuid: BluetoothUUID) throws(PeripheralMapError) -> MappedService {
        guard let service = services.first(where: { $0.uuid == uuid }) else { throw .notFound(address, uuid) }
        return service
    }

    /// The characteristic with `uuid`, in whichever discovered service holds it (the first one).
    /// - Throws: `.notFound(address, uuid)`.
    public func characteristic(_ uuid: BluetoothUUID) throws(PeripheralMapError) -> MappedCharacteristic {
        for service in services {
            if let characteristic = service.characteristics.first(where: { $0.uuid == uuid }) { return characteristic }
        }
        throw .notFound(address, uuid)
    }

    public var description: String { "\(address) \(state)\(name.map { " \"\($0)\"" } ?? "")" }
}

/// A discovered service of a mapped peripheral, with its characteristics.
public struct MappedService: Sendable {
    /// The address of the peripheral this service is on.
    public let peripheral: BluetoothAddress
    public let service: GATTService
    public let characteristics: [MappedCharacteristic]
    public var uuid: BluetoothUUID { service.uuid }

    /// The characteristic with `uuid` in this service.
    /// - Throws: `.notFound(peripheral, uuid)`.
    public func characteristic(_ uuid: BluetoothUUID) throws(PeripheralMapError) -> MappedCharacteristic {
        guard let characteristic = characteristics.first(where: { $0.uuid == uuid }) else {
            throw .notFound(peripheral, uuid)
        }
        return characteristic
    }
}

/// A proxy for one discovered characteristic of a mapped peripheral: reads, writes and
/// subscriptions go through the peripheral's `EngineGATTClient`, so they queue behind its other GATT
/// operations (ATT allows one request at a time per bearer, Core Vol 3 Part F §3.3.2) and fail with
/// `GATTError.disconnected(reason)` once the link is gone.
public struct MappedCharacteristic: Sendable {
    public let characteristic: GATTCharacteristic
    /// The client of the peripheral's connection, for anything the proxy does not offer.
    public let gatt: EngineGATTClient
    public var uuid: BluetoothUUID { characteristic.uuid }
    public var properties: CharacteristicProperties { characteristic.properties }

    /// Reads the whole value (Read, then Read Blob while parts come back full, §4.8.3).
    public func read() async throws(GATTError) -> [UInt8] {
        try await gatt.read(characteristic)
    }

    /// Writes the value with a response (Write Characteristic Value, §4.9.3; Write Long when it does
    /// not fit in one request).
    public func write(_ value: [UInt8]) async throws(GATTError) {
        try await gatt.write(value, to: characteristic)
    }

    /// Writes the value without a response (Write Command, §4.9.1): at most ATT_MTU − 3 octets.
    public func writeWithoutResponse(_ value: [UInt8]) async throws(GATTError) {
        try await gatt.writeWithoutResponse(value, to: characteristic.valueHandle)
    }

    /// Enables notifications (or indications) and returns them as a sequence (see
    /// `EngineGATTClient.subscribe(to:indications:)`).
    public func subscribe(indications: Bool = false) async throws(GATTError) -> CharacteristicSubscription {
        try await gatt.subscribe(to: characteristic, indications: indications)
    }
}
