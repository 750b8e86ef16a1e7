/// Something a client did that the application may want to know, collected by the server and taken
/// with `GATTServer.takeEvents()`.
public enum GATTServerEvent: Hashable, Sendable {
    /// The client exchanged MTUs; `mtu` is the ATT_MTU now in force on the connection.
    case mtuExchanged(connection: UInt16, mtu: Int)
    /// The client wrote a Client Characteristic Configuration descriptor (Core Vol 3 Part G §3.3.3.3).
    case subscriptionChanged(GATTSubscription)
    /// The client wrote a value the server keeps (`GATTDynamicValue.stored`): `value` is the whole new
    /// value. Values with a write handler are reported to it instead; cached values are not writable.
    case valueWritten(connection: UInt16, handle: UInt16, value: [UInt8])
    /// The client confirmed the indication of `handle` (Part F §3.4.7.3).
    case indicationConfirmed(connection: UInt16, handle: UInt16)
    /// An indication was not queued because the connection's indication queue was full.
    case indicationDropped(connection: UInt16, handle: UInt16)
}

/// A client's Client Characteristic Configuration for one characteristic.
public struct GATTSubscription: Hashable, Sendable {
    public var connection: UInt16
    /// The characteristic value handle (what `notify` / `indicate` take).
    public var valueHandle: UInt16
    /// The descriptor's value as written: bit 0 notifications, bit 1 indications.
    public var configuration: UInt16

    @inlinable
    public init(connection: UInt16, valueHandle: UInt16, configuration: UInt16) {
        self.connection = connection
        self.valueHandle = valueHandle
        self.configuration = configuration
    }

    /// Bit 0: the client wants notifications.
    @inlinable public var notifications: Bool { configuration & 0x0001 != 0 }
    /// Bit 1: the client wants indications.
    @inlinable public var indications: Bool { configuration & 0x0002 != 0 }
}

/// A PDU the server wants sent to one connection (a notification, an indication).
public struct GATTOutboundPDU: Hashable, Sendable {
    public var connection: UInt16
    /// The complete ATT PDU, opcode first.
    public var bytes: [UInt8]

    @inlinable
    public init(connection: UInt16, bytes: [UInt8]) {
        self.connection = connection
        self.bytes = bytes
    }
}

/// Why `notify` or `indicate` could not be done.
public enum GATTServerError: Error, Hashable, Sendable {
    /// No characteristic has this value handle.
    case notCharacteristicValue(UInt16)
    /// The characteristic's properties lack Notify (for `notify`) or Indicate (for `indicate`),
    /// or it has no Client Characteristic Configuration descriptor.
    case notSupportedByCharacteristic(UInt16)
}
