/// The container a capture file uses, found from its first bytes (never from its file name).
///
/// Android names btsnoop files `.log`, `.log.last`, `.cfa` or `.snoop`; Wireshark re-saves them as pcapng.
/// Only the magic numbers say which format a file really is.
public enum CaptureFormat: Sendable, Hashable {
    /// btsnoop version 1 with the given datalink (1001 H1, 1002 H4, 2001 Linux monitor, ...).
    case btsnoop(datalink: BTSnoopDatalink)
    /// pcapng; each interface description block names its own link type.
    case pcapng

    /// `btsnoop\0`: the 8-byte identification pattern of a btsnoop file (RFC 1761 §2, as used by btsnoop).
    public static let btsnoopMagic: [UInt8] = [0x62, 0x74, 0x73, 0x6E, 0x6F, 0x6F, 0x70, 0x00]
    /// The pcapng Section Header Block type, a palindrome so that it reads the same in both byte orders.
    public static let pcapngMagic: [UInt8] = [0x0A, 0x0D, 0x0D, 0x0A]

    /// Which container `prefix` (the first bytes of a file) starts, or nil if neither.
    ///
    /// A btsnoop file needs 8 bytes to be recognised, a pcapng file 4.
    @inlinable
    public static func detect(_ prefix: ArraySlice<UInt8>) -> DetectedContainer? {
        if startsWith(prefix, btsnoopMagic) { return .btsnoop }
        if startsWith(prefix, pcapngMagic) { return .pcapng }
        return nil
    }

    @inlinable
    static func startsWith(_ bytes: ArraySlice<UInt8>, _ magic: [UInt8]) -> Bool {
        guard bytes.count >= magic.count else { return false }
        var i = bytes.startIndex
        for byte in magic {
            guard bytes[i] == byte else { return false }
            i &+= 1
        }
        return true
    }

    /// Timestamps of btsnoop records count microseconds from midnight, 1 January of year 0 (Gregorian);
    /// this is that instant's distance from the Unix epoch in microseconds.
    public static let btsnoopEpochOffset: Int64 = 0x00DC_DDB3_0F2F_8000

    /// The Unix time (µs) of a record timestamp read from a file of this format.
    ///
    /// btsnoop counts from year 0; pcapng records are already converted to Unix microseconds.
    @inlinable
    public func unixMicroseconds(_ timestamp: Int64) -> Int64 {
        switch self {
        case .btsnoop: return timestamp &- CaptureFormat.btsnoopEpochOffset
        case .pcapng: return timestamp
        }
    }
}

/// The container family recognised from a magic number, before its header is read.
public enum DetectedContainer: Sendable, Hashable {
    case btsnoop
    case pcapng
}

/// The btsnoop datalink type: how each record's bytes are to be read.
public struct BTSnoopDatalink: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt32
    @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// HCI UART without the packet type byte; flags tell command/event from ACL.
    public static let h1 = BTSnoopDatalink(rawValue: 1001)
    /// HCI UART (H4): every record starts with the packet indicator byte.
    public static let h4 = BTSnoopDatalink(rawValue: 1002)
    public static let bcsp = BTSnoopDatalink(rawValue: 1003)
    public static let h5 = BTSnoopDatalink(rawValue: 1004)
    /// Linux monitor (`btmon -w`): flags carry the controller index and a monitor opcode.
    public static let linuxMonitor = BTSnoopDatalink(rawValue: 2001)
    public static let simulator = BTSnoopDatalink(rawValue: 2002)

    /// Whether Bluewire decodes HCI packets out of records of this datalink.
    @inlinable public var isSupported: Bool { self == .h1 || self == .h4 || self == .linuxMonitor }

    public var description: String {
        switch rawValue {
        case 1001: return "1001 (HCI UART H1)"
        case 1002: return "1002 (HCI UART H4)"
        case 1003: return "1003 (BCSP)"
        case 1004: return "1004 (HCI 3-wire H5)"
        case 2001: return "2001 (Linux monitor)"
        case 2002: return "2002 (simulator)"
        default: return "\(rawValue) (unknown)"
        }
    }
}
