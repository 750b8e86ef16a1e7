import BluewireCore
import BluewireGATT

/// Which characteristic a throughput run measures with, shared by `ThroughputClient` (BluetoothHost)
/// and `EngineThroughputClient` (EngineHost), which discover the database each their own way.
extension ThroughputOptions {
    /// The property the mode writes or subscribes with; the `l2cap` mode has no characteristic.
    func requiredProperties() throws(ThroughputError) -> CharacteristicProperties {
        switch mode {
        case .notify: .notify
        case .writeWithoutResponse: .writeWithoutResponse
        case .write: .write
        case .l2cap: throw .notGATT(.l2cap)
        }
    }

    /// Whether `characteristic` is the one to measure with: the one at `valueHandle` when given, else
    /// the profile's stream (notify) or sink (writes). The chosen one must have `needed`, or the run
    /// fails naming the property, rather than sending what the peer would refuse.
    func selects(_ characteristic: GATTCharacteristic, needing needed: CharacteristicProperties) throws(ThroughputError) -> Bool {
        let profileUUID = mode == .notify ? ThroughputProfile.stream : ThroughputProfile.sink
        guard valueHandle.map({ characteristic.valueHandle == $0 }) ?? (characteristic.uuid == profileUUID) else { return false }
        guard characteristic.properties.contains(needed) else {
            throw .propertyMissing(handle: characteristic.valueHandle, needed: needed, mode: mode)
        }
        return true
    }
}
