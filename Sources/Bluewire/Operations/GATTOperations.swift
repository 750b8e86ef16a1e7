import BluewireCore
import BluewireGATT

/// Ready-made operations for every GATT client procedure, to submit to an `GATTOperationQueue`.
///
/// ```swift
/// let services = try await queue.run(GATTOperations.discoverAllPrimaryServices())
/// let name = try await queue.run(GATTOperations.readLong(handle: 0x0003).timeout(.seconds(30)))
/// ```
public enum GATTOperations {
    public static func discoverAllPrimaryServices() -> ProcedureOperation<DiscoverAllPrimaryServices> {
        ProcedureOperation { _ in DiscoverAllPrimaryServices() }
    }

    public static func discoverPrimaryServices(uuid: BluetoothUUID) -> ProcedureOperation<DiscoverPrimaryServiceByServiceUUID> {
        ProcedureOperation { _ in DiscoverPrimaryServiceByServiceUUID(uuid: uuid) }
    }

    public static func findIncludedServices(of service: GATTService) -> ProcedureOperation<FindIncludedServices> {
        ProcedureOperation { _ in FindIncludedServices(of: service) }
    }

    /// All characteristics of `service`, or those of type `uuid`.
    public static func discoverCharacteristics(
        of service: GATTService, uuid: BluetoothUUID? = nil
    ) -> ProcedureOperation<DiscoverCharacteristics> {
        ProcedureOperation { _ in DiscoverCharacteristics(of: service, uuid: uuid) }
    }

    public static func discoverDescriptors(
        of characteristic: GATTCharacteristic
    ) -> ProcedureOperation<DiscoverAllCharacteristicDescriptors> {
        ProcedureOperation { _ in DiscoverAllCharacteristicDescriptors(of: characteristic) }
    }

    public static func read(handle: UInt16, requirements: OperationRequirements = []) -> ProcedureOperation<ReadCharacteristicValue> {
        ProcedureOperation(requirements: requirements) { _ in ReadCharacteristicValue(handle: handle) }
    }

    public static func readLong(
        handle: UInt16, requirements: OperationRequirements = []
    ) -> ProcedureOperation<ReadLongCharacteristicValues> {
        ProcedureOperation(requirements: requirements) { mtu in ReadLongCharacteristicValues(handle: handle, mtu: mtu) }
    }

    public static func readMultiple(handles: [UInt16]) -> ProcedureOperation<ReadMultipleCharacteristicValues> {
        ProcedureOperation { _ in ReadMultipleCharacteristicValues(handles: handles) }
    }

    public static func read(
        uuid: BluetoothUUID, startingHandle: UInt16 = 0x0001, endingHandle: UInt16 = 0xFFFF
    ) -> ProcedureOperation<ReadUsingCharacteristicUUID> {
        ProcedureOperation { _ in
            ReadUsingCharacteristicUUID(uuid: uuid, startingHandle: startingHandle, endingHandle: endingHandle)
        }
    }

    public static func write(
        _ value: [UInt8], to handle: UInt16, requirements: OperationRequirements = []
    ) -> ProcedureOperation<WriteCharacteristicValue> {
        ProcedureOperation(requirements: requirements) { mtu in WriteCharacteristicValue(handle: handle, value: value, mtu: mtu) }
    }

    public static func writeLong(
        _ value: [UInt8], to handle: UInt16, requirements: OperationRequirements = []
    ) -> ProcedureOperation<PreparedWrites> {
        ProcedureOperation(requirements: requirements) { mtu in PreparedWrites.writeLong(handle: handle, value: value, mtu: mtu) }
    }

    public static func reliableWrite(_ writes: [(handle: UInt16, value: [UInt8])]) -> ProcedureOperation<PreparedWrites> {
        ProcedureOperation { mtu in PreparedWrites.reliable(writes, mtu: mtu) }
    }

    public static func writeWithoutResponse(_ value: [UInt8], to handle: UInt16) -> WriteWithoutResponseOperation {
        WriteWithoutResponseOperation(handle: handle, value: value)
    }

    /// Enables notifications (or indications) of `characteristic`; returns its CCCD handle.
    public static func subscribe(
        to characteristic: GATTCharacteristic, indications: Bool = false, descriptorHandle: UInt16? = nil
    ) -> ProcedureOperation<ConfigureClientCharacteristicConfiguration> {
        ProcedureOperation { _ in
            .subscribe(to: characteristic, indications: indications, descriptorHandle: descriptorHandle)
        }
    }

    /// Disables notifications and indications of `characteristic`; returns its CCCD handle.
    public static func unsubscribe(
        from characteristic: GATTCharacteristic, descriptorHandle: UInt16? = nil
    ) -> ProcedureOperation<ConfigureClientCharacteristicConfiguration> {
        ProcedureOperation { _ in .unsubscribe(from: characteristic, descriptorHandle: descriptorHandle) }
    }
}
