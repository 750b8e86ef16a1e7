import BluewireATT
import BluewireCore

/// The value of a Client Characteristic Configuration descriptor (Core Vol 3 Part G §3.3.3.3):
/// bit 0 enables notifications, bit 1 indications; 0x0000 disables both.
public struct ClientCharacteristicConfiguration: OptionSet, Hashable, Sendable {
    public var rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let notification = ClientCharacteristicConfiguration(rawValue: 0x0001)
    public static let indication = ClientCharacteristicConfiguration(rawValue: 0x0002)

    /// The descriptor's two little-endian octets.
    @inlinable
    public var bytes: [UInt8] { [UInt8(truncatingIfNeeded: rawValue), UInt8(truncatingIfNeeded: rawValue >> 8)] }
}

/// Subscribes to or unsubscribes from a characteristic's notifications or indications by writing its
/// Client Characteristic Configuration descriptor (Core Vol 3 Part G §4.10, §4.11, §4.12.3): 0x0001
/// notifications, 0x0002 indications, 0x0000 neither.
///
/// When the CCCD handle is not known yet, the procedure first finds it with Find Information over the
/// characteristic's descriptors (§4.7.1). Its result is the CCCD handle, for the caller to remember.
/// Enabling what the characteristic's properties do not offer (Notify, Indicate; §3.3.1.1) is refused
/// before anything is sent.
public struct ConfigureClientCharacteristicConfiguration: GATTClientProcedure, Sendable {
    public let characteristic: GATTCharacteristic
    public let configuration: ClientCharacteristicConfiguration
    public private(set) var descriptorHandle: UInt16?
    @usableFromInline var search: DiscoverAllCharacteristicDescriptors?

    /// - Parameter descriptorHandle: the CCCD's handle if already known (skips the search).
    public init(
        characteristic: GATTCharacteristic, configuration: ClientCharacteristicConfiguration,
        descriptorHandle: UInt16? = nil
    ) {
        self.characteristic = characteristic
        self.configuration = configuration
        self.descriptorHandle = descriptorHandle
    }

    /// Enable notifications (or, with `indications: true`, indications).
    public static func subscribe(
        to characteristic: GATTCharacteristic, indications: Bool = false, descriptorHandle: UInt16? = nil
    ) -> ConfigureClientCharacteristicConfiguration {
        ConfigureClientCharacteristicConfiguration(
            characteristic: characteristic, configuration: indications ? .indication : .notification,
            descriptorHandle: descriptorHandle)
    }

    /// Disable notifications and indications (write 0x0000).
    public static func unsubscribe(
        from characteristic: GATTCharacteristic, descriptorHandle: UInt16? = nil
    ) -> ConfigureClientCharacteristicConfiguration {
        ConfigureClientCharacteristicConfiguration(
            characteristic: characteristic, configuration: [], descriptorHandle: descriptorHandle)
    }

    public mutating func start() throws(GATTClientError) -> GATTProcedureStep<UInt16> {
        if configuration.contains(.notification), !characteristic.properties.contains(.notify) {
            throw .propertyNotSupported(.notify, characteristicHandle: characteristic.handle)
        }
        if configuration.contains(.indication), !characteristic.properties.contains(.indicate) {
            throw .propertyNotSupported(.indicate, characteristicHandle: characteristic.handle)
        }
        if let descriptorHandle { return write(descriptorHandle) }
        var search = DiscoverAllCharacteristicDescriptors(of: characteristic)
        let step = try search.start()
        self.search = search
        return try searchStep(step)
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTClientError) -> GATTProcedureStep<UInt16> {
        if var search {
            let step = try search.receive(response)
            self.search = search
            return try searchStep(step)
        }
        guard case .writeResponse = response else {
            throw GATTClientError.unexpected(response, to: .writeRequest)
        }
        return .finished(descriptorHandle ?? 0)
    }

    @usableFromInline
    mutating func searchStep(_ step: GATTProcedureStep<[GATTDescriptor]>) throws(GATTClientError) -> GATTProcedureStep<UInt16> {
        switch step {
        case .request(let pdu):
            return .request(pdu)
        case .finished(let descriptors):
            search = nil
            guard let cccd = descriptors.first(where: { $0.uuid == .clientCharacteristicConfiguration }) else {
                throw .descriptorNotFound(.clientCharacteristicConfiguration, characteristicHandle: characteristic.handle)
            }
            return write(cccd.handle)
        }
    }

    @usableFromInline
    mutating func write(_ handle: UInt16) -> GATTProcedureStep<UInt16> {
        descriptorHandle = handle
        return .request(.writeRequest(handle: handle, value: configuration.bytes[...]))
    }
}
