import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI

/// What happened on the peripheral side of a Host (`BluetoothHost.peripheralEvents()`), in order:
/// centrals coming and going, their reads, writes and subscriptions, indication confirmations,
/// refused requests, and advertising starting and stopping.
public enum PeripheralEvent: Sendable, Hashable {
    /// A central connected (the local device is peripheral on this link).
    case connected(Connection)
    /// A central's link ended, with the reason the controller reported.
    case disconnected(connection: UInt16, peer: BluetoothAddress, reason: HCIStatus)
    /// The central exchanged MTUs; `mtu` is the ATT_MTU now in force.
    case mtuChanged(connection: UInt16, mtu: Int)
    /// A central read an attribute value (Read, Read Blob, Read Multiple, Read By Type of a
    /// characteristic or descriptor type).
    case read(PeripheralRead)
    /// A central wrote a value.
    case write(PeripheralWrite)
    /// A central changed its Client Characteristic Configuration (subscribed or unsubscribed).
    case subscriptionChanged(GATTSubscription)
    /// A central confirmed an indication.
    case indicationConfirmed(connection: UInt16, handle: UInt16)
    /// An indication was dropped: the central's indication queue was full.
    case indicationDropped(connection: UInt16, handle: UInt16)
    /// The server answered a central's request with an Error Response.
    case requestRefused(connection: UInt16, request: ATTOpcode, handle: UInt16, error: ATTErrorCode)
    /// The controller started advertising (after `startAdvertising`, or again after a connection or
    /// disconnection).
    case advertisingStarted(AdvertisingPlan.Kind)
    /// Advertising stopped: `stopAdvertising`, a connection (connectable advertising stops when a
    /// central connects, Core Vol 4 Part E §7.8.9), or the controller ending the set.
    case advertisingStopped
}

/// A read of an attribute by a central.
public struct PeripheralRead: Sendable, Hashable {
    public var connection: UInt16
    public var handle: UInt16
    /// The offset asked for (non-zero only for Read Blob).
    public var offset: Int
    /// The bytes sent back, when the response carries this attribute's value alone (Read, Read Blob,
    /// Read By Type); nil for Read Multiple, whose values are not delimited.
    public var value: [UInt8]?

    public init(connection: UInt16, handle: UInt16, offset: Int, value: [UInt8]?) {
        self.connection = connection
        self.handle = handle
        self.offset = offset
        self.value = value
    }
}

/// A write of an attribute by a central.
public struct PeripheralWrite: Sendable, Hashable {
    public var connection: UInt16
    public var handle: UInt16
    /// For a cached value: the whole value now held (offset 0). For a dynamic value: the bytes
    /// given to its write handler, at `offset`.
    public var value: [UInt8]
    public var offset: Int
    /// How the write arrived, for dynamic values (Write Request, Write Command, Execute Write); nil
    /// for cached values, whose server reports only the result.
    public var kind: GATTWriteKind?

    public init(connection: UInt16, handle: UInt16, value: [UInt8], offset: Int, kind: GATTWriteKind?) {
        self.connection = connection
        self.handle = handle
        self.value = value
        self.offset = offset
        self.kind = kind
    }
}
