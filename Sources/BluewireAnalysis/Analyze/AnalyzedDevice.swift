import BluewireCore
import BluewireGATT

/// One peer device of a capture and its GATT server as every connection to it revealed it.
public struct AnalyzedDevice: Sendable {
    /// The peer's address; nil when the device's only connection predates the capture.
    public var address: BluetoothAddress?
    /// Indexes into `CaptureAnalysis.connections`.
    public var connectionIndices: [Int] = []
    /// The union of what each connection discovered; a later connection wins for the same handle.
    public var table = DiscoveredGATTTable()
    /// The last value read from each handle, over all connections.
    public var lastReadValues: [UInt16: [UInt8]] = [:]
    /// The handle of the first connection, naming a device without an address.
    var firstHandle: UInt16
    var firstConnectionIndex: Int

    init(address: BluetoothAddress?, firstConnection: AnalyzedConnection) {
        self.address = address
        firstHandle = firstConnection.handle
        firstConnectionIndex = firstConnection.index
    }

    mutating func add(_ connection: AnalyzedConnection) {
        connectionIndices.append(connection.index)
        table.merge(connection.peerServer.table)
        for (handle, activity) in connection.peerServer.activity {
            if let value = activity.lastReadValue { lastReadValues[handle] = value }
        }
    }

    /// `AA:BB:CC:DD:EE:FF`, `…/random`, or a name built from the connection for an unknown peer.
    public var name: String {
        if let address { return address.description }
        return "unknown peer (connection \(firstConnectionIndex), handle 0x" + hex(firstHandle, width: 4) + ")"
    }

    /// The database file name `--export-db` writes: the address with `-` between octets, then
    /// `-random` for a random address, `.json` (`FA-E4-E3-24-20-09-random.json`). No `/` (it cannot
    /// be in a file name) and no `:` (Windows and macOS's Finder refuse it, shells and `scp` read it as
    /// a host separator).
    public var databaseFileName: String {
        if let address {
            var name = ""
            for character in address.hexString { name.append(character == ":" ? "-" : character) }
            return name + (address.type.isRandom ? "-random" : "") + ".json"
        }
        return "connection-\(firstConnectionIndex)-handle-0x" + hex(firstHandle, width: 4) + ".json"
    }

    /// The device's GATT database as far as the capture revealed it, for a GATT server to serve again
    /// handle for handle (Core Vol 3 Part G §3).
    ///
    /// Declarations carry the values discovery returned; characteristic values and descriptors carry
    /// the last value read (empty when never read; a Client Characteristic Configuration defaults to
    /// 0x0000, notifications off). Permissions follow the characteristic properties: readable if Read is
    /// set, writable if any write property is (§3.3.1.1). Values are cut at the 512-octet maximum (§3.2.9).
    public func database() throws(GATTDatabaseError) -> GATTDatabase {
        var byHandle: [UInt16: GATTAttribute] = [:]
        func value(_ handle: UInt16) -> [UInt8] {
            guard let bytes = lastReadValues[handle] else { return [] }
            return bytes.count > maximumAttributeValueLength ? Array(bytes.prefix(maximumAttributeValueLength)) : bytes
        }
        for service in table.services.values {
            byHandle[service.handle] = GATTAttribute(
                handle: service.handle, type: service.isPrimary ? .primaryService : .secondaryService,
                permissions: .read, bytes: service.uuid.attBytes)
        }
        for include in table.includes.values {
            byHandle[include.handle] = GATTAttribute(handle: include.handle, type: .include, permissions: .read, bytes: include.value)
        }
        for characteristic in table.characteristics.values {
            byHandle[characteristic.declarationHandle] = GATTAttribute(
                handle: characteristic.declarationHandle, type: .characteristic, permissions: .read,
                bytes: characteristic.declarationValue)
        }
        for characteristic in table.characteristics.values where byHandle[characteristic.valueHandle] == nil {
            // Writable: a dynamic value the server keeps (a cached one is read-only to centrals).
            let permissions = characteristic.properties.impliedPermissions
            byHandle[characteristic.valueHandle] = GATTAttribute(
                handle: characteristic.valueHandle, type: characteristic.uuid, permissions: permissions,
                value: GATTAttributeValue.cached(value(characteristic.valueHandle)).writable(permissions, type: characteristic.uuid))
        }
        for (handle, type) in table.attributeTypes where byHandle[handle] == nil && handle != 0 {
            if type == .clientCharacteristicConfiguration {
                let stored = value(handle)
                byHandle[handle] = GATTAttribute(
                    handle: handle, type: type, permissions: [.read, .write], bytes: stored.isEmpty ? [0, 0] : stored)
            } else {
                byHandle[handle] = GATTAttribute(handle: handle, type: type, permissions: .read, bytes: value(handle))
            }
        }
        var attributes: [GATTAttribute] = []
        for handle in byHandle.keys.sorted() {
            if let attribute = byHandle[handle] { attributes.append(attribute) }
        }
        return try GATTDatabase(attributes: attributes)
    }
}
