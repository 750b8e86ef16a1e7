import BluewireCore

/// The connection parameters shared by LE Create Connection, LE Extended Create Connection and
/// LE Connection Update (Core Vol 4 Part E §7.8.12, §7.8.66, §7.8.18).
///
/// Intervals are in 1.25 ms units (0x0006…0x0C80), the supervision timeout in 10 ms units
/// (0x000A…0x0C80) and must exceed (1 + latency) × interval × 2, CE lengths in 0.625 ms units.
public struct LEConnectionParameters: Hashable, Sendable {
    public var connectionIntervalMin: UInt16
    public var connectionIntervalMax: UInt16
    public var maxLatency: UInt16
    public var supervisionTimeout: UInt16
    public var minCELength: UInt16
    public var maxCELength: UInt16

    public init(
        connectionIntervalMin: UInt16 = 0x0018, connectionIntervalMax: UInt16 = 0x0028, maxLatency: UInt16 = 0,
        supervisionTimeout: UInt16 = 0x01F4, minCELength: UInt16 = 0, maxCELength: UInt16 = 0
    ) {
        self.connectionIntervalMin = connectionIntervalMin
        self.connectionIntervalMax = connectionIntervalMax
        self.maxLatency = maxLatency
        self.supervisionTimeout = supervisionTimeout
        self.minCELength = minCELength
        self.maxCELength = maxCELength
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(connectionIntervalMin)
        writer.append(connectionIntervalMax)
        writer.append(maxLatency)
        writer.append(supervisionTimeout)
        writer.append(minCELength)
        writer.append(maxCELength)
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        connectionIntervalMin = try reader.readUInt16("Connection_Interval_Min")
        connectionIntervalMax = try reader.readUInt16("Connection_Interval_Max")
        maxLatency = try reader.readUInt16("Max_Latency")
        supervisionTimeout = try reader.readUInt16("Supervision_Timeout")
        minCELength = try reader.readUInt16("Min_CE_Length")
        maxCELength = try reader.readUInt16("Max_CE_Length")
    }
}

/// LE Create Connection (§7.8.12): legacy initiating on LE 1M. The controller answers Command Status
/// and later LE (Enhanced) Connection Complete; LE Create Connection Cancel ends it with status 0x02.
public struct LECreateConnection: HCICommandParameters {
    public static var opcode: HCIOpcode { .leCreateConnection }
    public var scanInterval: UInt16
    public var scanWindow: UInt16
    /// 0x00 connect to `peerAddress`, 0x01 to any device in the Filter Accept List.
    public var initiatorFilterPolicy: UInt8
    public var peerAddress: BluetoothAddress
    public var ownAddressType: UInt8
    public var connection: LEConnectionParameters

    public init(
        scanInterval: UInt16 = 0x0060, scanWindow: UInt16 = 0x0060, initiatorFilterPolicy: UInt8 = 0,
        peerAddress: BluetoothAddress, ownAddressType: UInt8 = 0x01, connection: LEConnectionParameters = LEConnectionParameters()
    ) {
        self.scanInterval = scanInterval
        self.scanWindow = scanWindow
        self.initiatorFilterPolicy = initiatorFilterPolicy
        self.peerAddress = peerAddress
        self.ownAddressType = ownAddressType
        self.connection = connection
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(scanInterval)
        writer.append(scanWindow)
        writer.append(initiatorFilterPolicy)
        writer.append(peerAddress.type.rawValue)
        writer.append(peerAddress)
        writer.append(ownAddressType)
        connection.encode(into: &writer)
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        scanInterval = try reader.readUInt16("LE_Scan_Interval")
        scanWindow = try reader.readUInt16("LE_Scan_Window")
        initiatorFilterPolicy = try reader.readUInt8("Initiator_Filter_Policy")
        let peerType = BluetoothAddress.AddressType(hciValue: try reader.readUInt8("Peer_Address_Type"))
        peerAddress = try reader.readAddress(type: peerType, "Peer_Address")
        ownAddressType = try reader.readUInt8("Own_Address_Type")
        connection = try LEConnectionParameters(decoding: &reader)
    }
}

/// LE Extended Create Connection [v1] (§7.8.66): initiating on several PHYs; one block of scan and
/// connection parameters follows for each bit of Initiating_PHYs, in bit order (1M, 2M, Coded).
public struct LEExtendedCreateConnection: HCICommandParameters {
    public static var opcode: HCIOpcode { .leExtendedCreateConnection }

    /// Scan and connection parameters for one initiating PHY.
    public struct PHYParameters: Hashable, Sendable {
        public var scanInterval: UInt16
        public var scanWindow: UInt16
        public var connection: LEConnectionParameters
        public init(scanInterval: UInt16 = 0x0060, scanWindow: UInt16 = 0x0060, connection: LEConnectionParameters = LEConnectionParameters()) {
            self.scanInterval = scanInterval
            self.scanWindow = scanWindow
            self.connection = connection
        }
    }

    public var initiatorFilterPolicy: UInt8
    public var ownAddressType: UInt8
    public var peerAddress: BluetoothAddress
    public var le1M: PHYParameters?
    public var le2M: PHYParameters?
    public var leCoded: PHYParameters?

    public init(
        initiatorFilterPolicy: UInt8 = 0, ownAddressType: UInt8 = 0x01, peerAddress: BluetoothAddress,
        le1M: PHYParameters? = PHYParameters(), le2M: PHYParameters? = nil, leCoded: PHYParameters? = nil
    ) {
        self.initiatorFilterPolicy = initiatorFilterPolicy
        self.ownAddressType = ownAddressType
        self.peerAddress = peerAddress
        self.le1M = le1M
        self.le2M = le2M
        self.leCoded = leCoded
    }

    public var initiatingPHYs: LEPHYSet {
        var set: LEPHYSet = []
        if le1M != nil { set.insert(.le1M) }
        if le2M != nil { set.insert(.le2M) }
        if leCoded != nil { set.insert(.leCoded) }
        return set
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(initiatorFilterPolicy)
        writer.append(ownAddressType)
        writer.append(peerAddress.type.rawValue)
        writer.append(peerAddress)
        writer.append(initiatingPHYs.rawValue)
        for phy in [le1M, le2M, leCoded] {
            guard let phy else { continue }
            writer.append(phy.scanInterval)
            writer.append(phy.scanWindow)
            phy.connection.encode(into: &writer)
        }
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        initiatorFilterPolicy = try reader.readUInt8("Initiator_Filter_Policy")
        ownAddressType = try reader.readUInt8("Own_Address_Type")
        let peerType = BluetoothAddress.AddressType(hciValue: try reader.readUInt8("Peer_Address_Type"))
        peerAddress = try reader.readAddress(type: peerType, "Peer_Address")
        let phys = LEPHYSet(rawValue: try reader.readUInt8("Initiating_PHYs"))
        le1M = phys.contains(.le1M) ? try Self.readPHY(&reader) : nil
        le2M = phys.contains(.le2M) ? try Self.readPHY(&reader) : nil
        leCoded = phys.contains(.leCoded) ? try Self.readPHY(&reader) : nil
    }

    static func readPHY(_ reader: inout ByteReader) throws(DecodeError) -> PHYParameters {
        let interval = try reader.readUInt16("Scan_Interval")
        let window = try reader.readUInt16("Scan_Window")
        return PHYParameters(scanInterval: interval, scanWindow: window, connection: try LEConnectionParameters(decoding: &reader))
    }
}

/// LE Connection Update (§7.8.18): the result comes in LE Connection Update Complete.
public struct LEConnectionUpdate: HCICommandParameters {
    public static var opcode: HCIOpcode { .leConnectionUpdate }
    public var connectionHandle: UInt16
    public var connection: LEConnectionParameters

    public init(connectionHandle: UInt16, connection: LEConnectionParameters) {
        self.connectionHandle = connectionHandle
        self.connection = connection
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(connectionHandle)
        connection.encode(into: &writer)
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readUInt16("Connection_Handle")
        connection = try LEConnectionParameters(decoding: &reader)
    }
}
