import BluewireCore

/// LE Connection Complete (Core Vol 4 Part E §7.7.65.1) and LE Enhanced Connection Complete
/// [v1] (§7.7.65.10) / [v2] (§7.7.65.10, subevent 0x29), in one type: the enhanced forms add the
/// resolvable private addresses and, in v2, the advertising and sync handles.
///
/// Status 0x02 (Unknown Connection Identifier) after LE Create Connection Cancel, or 0x3E, means
/// no connection was made; only status 0 is a connection.
public struct LEConnectionComplete: Hashable, Sendable {
    public var status: HCIStatus
    public var connectionHandle: UInt16
    /// 0x00 Central, 0x01 Peripheral.
    public var role: UInt8
    public var peerAddress: BluetoothAddress
    /// Enhanced only: our resolvable private address, or 00:00:00:00:00:00.
    public var localResolvablePrivateAddress: BluetoothAddress?
    /// Enhanced only: the peer's resolvable private address, or 00:00:00:00:00:00.
    public var peerResolvablePrivateAddress: BluetoothAddress?
    /// 1.25 ms units.
    public var connectionInterval: UInt16
    public var peripheralLatency: UInt16
    /// 10 ms units.
    public var supervisionTimeout: UInt16
    public var centralClockAccuracy: UInt8
    /// v2 only.
    public var advertisingHandle: UInt8?
    /// v2 only.
    public var syncHandle: UInt16?

    public var isCentral: Bool { role == 0 }

    public init(
        status: HCIStatus, connectionHandle: UInt16, role: UInt8, peerAddress: BluetoothAddress,
        localResolvablePrivateAddress: BluetoothAddress? = nil, peerResolvablePrivateAddress: BluetoothAddress? = nil,
        connectionInterval: UInt16, peripheralLatency: UInt16, supervisionTimeout: UInt16, centralClockAccuracy: UInt8,
        advertisingHandle: UInt8? = nil, syncHandle: UInt16? = nil
    ) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.role = role
        self.peerAddress = peerAddress
        self.localResolvablePrivateAddress = localResolvablePrivateAddress
        self.peerResolvablePrivateAddress = peerResolvablePrivateAddress
        self.connectionInterval = connectionInterval
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
        self.centralClockAccuracy = centralClockAccuracy
        self.advertisingHandle = advertisingHandle
        self.syncHandle = syncHandle
    }

    /// `version` 0 decodes subevent 0x01, 1 subevent 0x0A, 2 subevent 0x29.
    @inlinable
    public init(decoding r: inout ByteReader, version: Int) throws(DecodeError) {
        status = HCIStatus(try r.readUInt8("Status"))
        connectionHandle = try r.readUInt16("Connection_Handle") & 0x0FFF
        role = try r.readUInt8("Role")
        let peerType = BluetoothAddress.AddressType(hciValue: try r.readUInt8("Peer_Address_Type"))
        peerAddress = try r.readAddress(type: peerType, "Peer_Address")
        if version >= 1 {
            localResolvablePrivateAddress = try r.readAddress(type: .random, "Local_Resolvable_Private_Address")
            peerResolvablePrivateAddress = try r.readAddress(type: .random, "Peer_Resolvable_Private_Address")
        } else {
            localResolvablePrivateAddress = nil
            peerResolvablePrivateAddress = nil
        }
        connectionInterval = try r.readUInt16("Connection_Interval")
        peripheralLatency = try r.readUInt16("Peripheral_Latency")
        supervisionTimeout = try r.readUInt16("Supervision_Timeout")
        centralClockAccuracy = try r.readUInt8("Central_Clock_Accuracy")
        if version >= 2 {
            advertisingHandle = try r.readUInt8("Advertising_Handle")
            syncHandle = try r.readUInt16("Sync_Handle")
        } else {
            advertisingHandle = nil
            syncHandle = nil
        }
    }
}

/// LE Connection Update Complete (§7.7.65.3): the connection parameters now in use.
public struct LEConnectionUpdateComplete: Hashable, Sendable {
    public var status: HCIStatus
    public var connectionHandle: UInt16
    public var connectionInterval: UInt16
    public var peripheralLatency: UInt16
    public var supervisionTimeout: UInt16

    @inlinable
    public init(decoding r: inout ByteReader) throws(DecodeError) {
        status = HCIStatus(try r.readUInt8("Status"))
        connectionHandle = try r.readUInt16("Connection_Handle") & 0x0FFF
        connectionInterval = try r.readUInt16("Connection_Interval")
        peripheralLatency = try r.readUInt16("Peripheral_Latency")
        supervisionTimeout = try r.readUInt16("Supervision_Timeout")
    }
}

/// LE Read Remote Features Complete (§7.7.65.4): the peer's LE feature mask.
public struct LEReadRemoteFeaturesComplete: Hashable, Sendable {
    public var status: HCIStatus
    public var connectionHandle: UInt16
    public var leFeatures: LEFeatures

    @inlinable
    public init(decoding r: inout ByteReader) throws(DecodeError) {
        status = HCIStatus(try r.readUInt8("Status"))
        connectionHandle = try r.readUInt16("Connection_Handle") & 0x0FFF
        leFeatures = LEFeatures(rawValue: try r.readUInt64("LE_Features"))
    }
}

/// LE Long Term Key Request (§7.7.65.5): the peer (as central) started encryption; the host must
/// answer with LE Long Term Key Request Reply or Negative Reply.
public struct LELongTermKeyRequest: Hashable, Sendable {
    public var connectionHandle: UInt16
    public var randomNumber: UInt64
    public var encryptedDiversifier: UInt16

    @inlinable
    public init(decoding r: inout ByteReader) throws(DecodeError) {
        connectionHandle = try r.readUInt16("Connection_Handle") & 0x0FFF
        randomNumber = try r.readUInt64("Random_Number")
        encryptedDiversifier = try r.readUInt16("Encrypted_Diversifier")
    }
}

/// LE Data Length Change (§7.7.65.7): the largest LL payloads (octets) and air times (µs) now used.
public struct LEDataLengthChange: Hashable, Sendable {
    public var connectionHandle: UInt16
    public var maxTxOctets: UInt16
    public var maxTxTime: UInt16
    public var maxRxOctets: UInt16
    public var maxRxTime: UInt16

    @inlinable
    public init(decoding r: inout ByteReader) throws(DecodeError) {
        connectionHandle = try r.readUInt16("Connection_Handle") & 0x0FFF
        maxTxOctets = try r.readUInt16("Max_TX_Octets")
        maxTxTime = try r.readUInt16("Max_TX_Time")
        maxRxOctets = try r.readUInt16("Max_RX_Octets")
        maxRxTime = try r.readUInt16("Max_RX_Time")
    }
}

/// LE PHY Update Complete (§7.7.65.12): 0x01 LE 1M, 0x02 LE 2M, 0x03 LE Coded.
public struct LEPHYUpdateComplete: Hashable, Sendable {
    public var status: HCIStatus
    public var connectionHandle: UInt16
    public var txPHY: UInt8
    public var rxPHY: UInt8

    @inlinable
    public init(decoding r: inout ByteReader) throws(DecodeError) {
        status = HCIStatus(try r.readUInt8("Status"))
        connectionHandle = try r.readUInt16("Connection_Handle") & 0x0FFF
        txPHY = try r.readUInt8("TX_PHY")
        rxPHY = try r.readUInt8("RX_PHY")
    }
}

/// LE Advertising Set Terminated (§7.7.65.18): a set stopped, because of a connection (status 0,
/// Connection_Handle valid), its duration ran out (0x3C) or its event limit was reached (0x43).
public struct LEAdvertisingSetTerminated: Hashable, Sendable {
    public var status: HCIStatus
    public var advertisingHandle: UInt8
    public var connectionHandle: UInt16
    public var numCompletedExtendedAdvertisingEvents: UInt8

    @inlinable
    public init(decoding r: inout ByteReader) throws(DecodeError) {
        status = HCIStatus(try r.readUInt8("Status"))
        advertisingHandle = try r.readUInt8("Advertising_Handle")
        connectionHandle = try r.readUInt16("Connection_Handle") & 0x0FFF
        numCompletedExtendedAdvertisingEvents = try r.readUInt8("Num_Completed_Extended_Advertising_Events")
    }
}

/// LE Channel Selection Algorithm (§7.7.65.20): 0x00 algorithm #1, 0x01 algorithm #2.
public struct LEChannelSelectionAlgorithm: Hashable, Sendable {
    public var connectionHandle: UInt16
    public var channelSelectionAlgorithm: UInt8

    @inlinable
    public init(decoding r: inout ByteReader) throws(DecodeError) {
        connectionHandle = try r.readUInt16("Connection_Handle") & 0x0FFF
        channelSelectionAlgorithm = try r.readUInt8("Channel_Selection_Algorithm")
    }
}
