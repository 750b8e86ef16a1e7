import BluewireCore

/// Server Supported Features bits (Core Vol 3 Part G §7.4), the value of characteristic 0x2B3A.
public struct GATTServerFeatures: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Bit 0: the server supports Enhanced ATT bearers (Part G §5.3.2).
    public static let eatt = GATTServerFeatures(rawValue: 1 << 0)
}

/// Client Supported Features bits (Core Vol 3 Part G §7.2), what a client writes to 0x2B29.
public struct GATTClientFeatures: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Bit 0: Robust Caching (§2.5.2.1).
    public static let robustCaching = GATTClientFeatures(rawValue: 1 << 0)
    /// Bit 1: Enhanced ATT bearers.
    public static let eatt = GATTClientFeatures(rawValue: 1 << 1)
    /// Bit 2: Multiple Handle Value Notifications (Part F §3.4.7.4).
    public static let multipleHandleValueNotifications = GATTClientFeatures(rawValue: 1 << 2)
}

/// Handles of the GATT service's feature characteristics.
public struct GATTFeatureHandles: Hashable, Sendable {
    public var serverSupportedFeatures: UInt16
    public var clientSupportedFeatures: UInt16
}

extension GATTDatabaseBuilder {
    /// Adds the GATT service (0x1801) with Server Supported Features (read only, `serverFeatures`;
    /// Core Vol 3 Part G §7.4) and Client Supported Features (read and write, Part G §7.2). The server
    /// keeps Client Supported Features per client, refusing a write that clears a bit the client set
    /// (Value Not Allowed), and reads it back as that client wrote it.
    @discardableResult
    public mutating func addGenericAttributeService(
        serverFeatures: GATTServerFeatures
    ) throws(GATTDatabaseError) -> GATTFeatureHandles {
        try addService(.genericAttribute)
        let server = try addCharacteristic(
            .serverSupportedFeatures, properties: [.read], permissions: [.read], value: .cached([serverFeatures.rawValue]))
        let client = try addCharacteristic(
            .clientSupportedFeatures, properties: [.read, .write], permissions: [.read, .write], value: .cached([0]))
        return GATTFeatureHandles(serverSupportedFeatures: server.valueHandle, clientSupportedFeatures: client.valueHandle)
    }
}
