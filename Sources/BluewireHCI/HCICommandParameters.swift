import BluewireCore

/// The parameters of one HCI command, encoded after its opcode and length (Core Vol 4 Part E §5.4.1).
///
/// Each conforming type mirrors one command's parameter table in Core Vol 4 Part E §7, field for field,
/// so that encoding and decoding round-trip and a capture's command can be shown with typed fields.
public protocol HCICommandParameters: Hashable, Sendable {
    /// The command these parameters belong to.
    static var opcode: HCIOpcode { get }
    /// Appends the parameters in wire order.
    func encode(into writer: inout ByteWriter)
    /// Reads the parameters; trailing bytes are left unread (vendors pad some commands).
    init(decoding reader: inout ByteReader) throws(DecodeError)
}

/// Disconnect (Core Vol 4 Part E §7.1.6): ends a connection; the reason is sent to the peer and comes
/// back in Disconnection Complete. Allowed reasons include 0x05, 0x13–0x15, 0x1A, 0x29 and 0x3B.
public struct Disconnect: HCICommandParameters {
    public static var opcode: HCIOpcode { .disconnect }
    public var connectionHandle: UInt16
    public var reason: HCIStatus

    public init(connectionHandle: UInt16, reason: HCIStatus = .remoteUserTerminatedConnection) {
        self.connectionHandle = connectionHandle
        self.reason = reason
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(connectionHandle)
        writer.append(reason.rawValue)
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readUInt16("Connection_Handle")
        reason = HCIStatus(try reader.readUInt8("Reason"))
    }
}

/// Parameters made of one Connection_Handle: Read Remote Version Information (§7.1.23),
/// LE Read Remote Features (§7.8.21), LE Read PHY (§7.8.47).
public struct ConnectionHandleParameter: Hashable, Sendable {
    public var connectionHandle: UInt16

    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }

    public func encode(into writer: inout ByteWriter) { writer.append(connectionHandle) }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readUInt16("Connection_Handle")
    }
}

/// A 64-bit event mask: Set Event Mask (§7.3.1) or LE Set Event Mask (§7.8.1).
/// Bit n enables the event with code n+1 (Set Event Mask) or LE subevent code n+1 (LE Set Event Mask).
public struct EventMask: Hashable, Sendable {
    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// A Set Event Mask value enabling the given event codes (Core Vol 4 Part E §7.3.1: bit = code − 1).
    public static func events(_ codes: [UInt8]) -> EventMask {
        var value: UInt64 = 0
        for code in codes where code >= 1 && code <= 64 { value |= 1 << UInt64(code - 1) }
        return EventMask(rawValue: value)
    }

    /// Whether the event (or LE subevent) with this code is enabled.
    public func enables(code: UInt8) -> Bool {
        code >= 1 && code <= 64 && rawValue & (1 << UInt64(code - 1)) != 0
    }

    public func encode(into writer: inout ByteWriter) { writer.append(rawValue) }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        rawValue = try reader.readUInt64("Event_Mask")
    }
}

/// LE Set Random Address (§7.8.4): the random address used when Own_Address_Type is 0x01.
/// bumble routes link traffic by random address, so the stack always sets a static one.
public struct LESetRandomAddress: HCICommandParameters {
    public static var opcode: HCIOpcode { .leSetRandomAddress }
    public var randomAddress: BluetoothAddress

    public init(randomAddress: BluetoothAddress) { self.randomAddress = randomAddress }

    public func encode(into writer: inout ByteWriter) { writer.append(randomAddress) }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        randomAddress = try reader.readAddress(type: .random, "Random_Address")
    }
}

/// LE Set Data Length (§7.8.33): suggests the largest LL payload (27…251 octets) and time
/// (328…17040 µs) for one connection.
public struct LESetDataLength: HCICommandParameters {
    public static var opcode: HCIOpcode { .leSetDataLength }
    public var connectionHandle: UInt16
    public var txOctets: UInt16
    public var txTime: UInt16

    public init(connectionHandle: UInt16, txOctets: UInt16 = 251, txTime: UInt16 = 2120) {
        self.connectionHandle = connectionHandle
        self.txOctets = txOctets
        self.txTime = txTime
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(connectionHandle)
        writer.append(txOctets)
        writer.append(txTime)
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readUInt16("Connection_Handle")
        txOctets = try reader.readUInt16("TX_Octets")
        txTime = try reader.readUInt16("TX_Time")
    }
}

/// LE Write Suggested Default Data Length (§7.8.35): the data length used for new connections.
public struct LEWriteSuggestedDefaultDataLength: HCICommandParameters {
    public static var opcode: HCIOpcode { .leWriteSuggestedDefaultDataLength }
    public var suggestedMaxTxOctets: UInt16
    public var suggestedMaxTxTime: UInt16

    public init(suggestedMaxTxOctets: UInt16 = 251, suggestedMaxTxTime: UInt16 = 2120) {
        self.suggestedMaxTxOctets = suggestedMaxTxOctets
        self.suggestedMaxTxTime = suggestedMaxTxTime
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(suggestedMaxTxOctets)
        writer.append(suggestedMaxTxTime)
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        suggestedMaxTxOctets = try reader.readUInt16("Suggested_Max_TX_Octets")
        suggestedMaxTxTime = try reader.readUInt16("Suggested_Max_TX_Time")
    }
}

/// A set of LE PHYs as HCI encodes them in TX_PHYs/RX_PHYs/Scanning_PHYs (bit 0 1M, bit 1 2M, bit 2 Coded).
public struct LEPHYSet: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let le1M = LEPHYSet(rawValue: 1 << 0)
    public static let le2M = LEPHYSet(rawValue: 1 << 1)
    public static let leCoded = LEPHYSet(rawValue: 1 << 2)
}

/// LE Set Default PHY (§7.8.48): PHY preferences for new connections. All_PHYs bit 0/1 = no TX/RX preference.
public struct LESetDefaultPHY: HCICommandParameters {
    public static var opcode: HCIOpcode { .leSetDefaultPHY }
    public var allPHYs: UInt8
    public var txPHYs: LEPHYSet
    public var rxPHYs: LEPHYSet

    public init(allPHYs: UInt8 = 0, txPHYs: LEPHYSet, rxPHYs: LEPHYSet) {
        self.allPHYs = allPHYs
        self.txPHYs = txPHYs
        self.rxPHYs = rxPHYs
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(allPHYs)
        writer.append(txPHYs.rawValue)
        writer.append(rxPHYs.rawValue)
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        allPHYs = try reader.readUInt8("All_PHYs")
        txPHYs = LEPHYSet(rawValue: try reader.readUInt8("TX_PHYs"))
        rxPHYs = LEPHYSet(rawValue: try reader.readUInt8("RX_PHYs"))
    }
}

/// LE Set PHY (§7.8.49): asks for a PHY change on one connection; the result comes in
/// LE PHY Update Complete. PHY_Options selects S=2 or S=8 coding on the Coded PHY.
public struct LESetPHY: HCICommandParameters {
    public static var opcode: HCIOpcode { .leSetPHY }
    public var connectionHandle: UInt16
    public var allPHYs: UInt8
    public var txPHYs: LEPHYSet
    public var rxPHYs: LEPHYSet
    public var phyOptions: UInt16

    public init(connectionHandle: UInt16, allPHYs: UInt8 = 0, txPHYs: LEPHYSet, rxPHYs: LEPHYSet, phyOptions: UInt16 = 0) {
        self.connectionHandle = connectionHandle
        self.allPHYs = allPHYs
        self.txPHYs = txPHYs
        self.rxPHYs = rxPHYs
        self.phyOptions = phyOptions
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(connectionHandle)
        writer.append(allPHYs)
        writer.append(txPHYs.rawValue)
        writer.append(rxPHYs.rawValue)
        writer.append(phyOptions)
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readUInt16("Connection_Handle")
        allPHYs = try reader.readUInt8("All_PHYs")
        txPHYs = LEPHYSet(rawValue: try reader.readUInt8("TX_PHYs"))
        rxPHYs = LEPHYSet(rawValue: try reader.readUInt8("RX_PHYs"))
        phyOptions = try reader.readUInt16("PHY_Options")
    }
}
