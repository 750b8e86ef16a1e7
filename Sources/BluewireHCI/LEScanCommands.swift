import BluewireCore

/// LE Set Scan Parameters (Core Vol 4 Part E §7.8.10): legacy scanning on the 1M PHY.
/// Interval and window are in 0.625 ms units (0x0004…0x4000); the window must not exceed the interval.
public struct LESetScanParameters: HCICommandParameters {
    public static var opcode: HCIOpcode { .leSetScanParameters }
    /// 0x00 passive (no scan requests), 0x01 active (scan requests bring scan responses).
    public var scanType: UInt8
    public var scanInterval: UInt16
    public var scanWindow: UInt16
    /// 0x00 public, 0x01 random, 0x02/0x03 resolvable private falling back to public/random.
    public var ownAddressType: UInt8
    public var scanningFilterPolicy: UInt8

    public init(
        active: Bool = true, scanInterval: UInt16 = 0x0060, scanWindow: UInt16 = 0x0030,
        ownAddressType: UInt8 = 0x01, scanningFilterPolicy: UInt8 = 0x00
    ) {
        self.scanType = active ? 0x01 : 0x00
        self.scanInterval = scanInterval
        self.scanWindow = scanWindow
        self.ownAddressType = ownAddressType
        self.scanningFilterPolicy = scanningFilterPolicy
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(scanType)
        writer.append(scanInterval)
        writer.append(scanWindow)
        writer.append(ownAddressType)
        writer.append(scanningFilterPolicy)
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        scanType = try reader.readUInt8("LE_Scan_Type")
        scanInterval = try reader.readUInt16("LE_Scan_Interval")
        scanWindow = try reader.readUInt16("LE_Scan_Window")
        ownAddressType = try reader.readUInt8("Own_Address_Type")
        scanningFilterPolicy = try reader.readUInt8("Scanning_Filter_Policy")
    }
}

/// LE Set Scan Enable (§7.8.11). With duplicate filtering the controller reports each advertiser once
/// per scan (bumble ignores it, so the host de-duplicates anyway).
public struct LESetScanEnable: HCICommandParameters {
    public static var opcode: HCIOpcode { .leSetScanEnable }
    public var enable: Bool
    public var filterDuplicates: Bool

    public init(enable: Bool, filterDuplicates: Bool = false) {
        self.enable = enable
        self.filterDuplicates = filterDuplicates
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(UInt8(enable ? 1 : 0))
        writer.append(UInt8(filterDuplicates ? 1 : 0))
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        enable = try reader.readUInt8("LE_Scan_Enable") != 0
        filterDuplicates = try reader.readUInt8("Filter_Duplicates") != 0
    }
}

/// LE Set Extended Scan Parameters (§7.8.64): one Scan_Type/Interval/Window triple follows for each
/// bit set in Scanning_PHYs, in bit order (1M first, then Coded).
public struct LESetExtendedScanParameters: HCICommandParameters {
    public static var opcode: HCIOpcode { .leSetExtendedScanParameters }

    /// The scan settings for one PHY.
    public struct PHYParameters: Hashable, Sendable {
        public var scanType: UInt8
        public var scanInterval: UInt16
        public var scanWindow: UInt16

        public init(active: Bool = true, scanInterval: UInt16 = 0x0060, scanWindow: UInt16 = 0x0030) {
            self.scanType = active ? 1 : 0
            self.scanInterval = scanInterval
            self.scanWindow = scanWindow
        }
    }

    public var ownAddressType: UInt8
    public var scanningFilterPolicy: UInt8
    /// Settings on LE 1M (Scanning_PHYs bit 0).
    public var le1M: PHYParameters?
    /// Settings on LE Coded (Scanning_PHYs bit 2).
    public var leCoded: PHYParameters?

    public init(ownAddressType: UInt8 = 0x01, scanningFilterPolicy: UInt8 = 0, le1M: PHYParameters? = PHYParameters(), leCoded: PHYParameters? = nil) {
        self.ownAddressType = ownAddressType
        self.scanningFilterPolicy = scanningFilterPolicy
        self.le1M = le1M
        self.leCoded = leCoded
    }

    public var scanningPHYs: LEPHYSet {
        var set: LEPHYSet = []
        if le1M != nil { set.insert(.le1M) }
        if leCoded != nil { set.insert(.leCoded) }
        return set
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(ownAddressType)
        writer.append(scanningFilterPolicy)
        writer.append(scanningPHYs.rawValue)
        for phy in [le1M, leCoded] {
            guard let phy else { continue }
            writer.append(phy.scanType)
            writer.append(phy.scanInterval)
            writer.append(phy.scanWindow)
        }
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        ownAddressType = try reader.readUInt8("Own_Address_Type")
        scanningFilterPolicy = try reader.readUInt8("Scanning_Filter_Policy")
        let phys = LEPHYSet(rawValue: try reader.readUInt8("Scanning_PHYs"))
        le1M = phys.contains(.le1M) ? try Self.readPHY(&reader) : nil
        leCoded = phys.contains(.leCoded) ? try Self.readPHY(&reader) : nil
    }

    static func readPHY(_ reader: inout ByteReader) throws(DecodeError) -> PHYParameters {
        var p = PHYParameters()
        p.scanType = try reader.readUInt8("Scan_Type")
        p.scanInterval = try reader.readUInt16("Scan_Interval")
        p.scanWindow = try reader.readUInt16("Scan_Window")
        return p
    }
}

/// LE Set Extended Scan Enable (§7.8.65). Duration is in 10 ms units (0 = until disabled), Period in 1.28 s.
public struct LESetExtendedScanEnable: HCICommandParameters {
    public static var opcode: HCIOpcode { .leSetExtendedScanEnable }
    public var enable: Bool
    /// 0x00 off, 0x01 on, 0x02 on and reset each scan period.
    public var filterDuplicates: UInt8
    public var duration: UInt16
    public var period: UInt16

    public init(enable: Bool, filterDuplicates: UInt8 = 0, duration: UInt16 = 0, period: UInt16 = 0) {
        self.enable = enable
        self.filterDuplicates = filterDuplicates
        self.duration = duration
        self.period = period
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(UInt8(enable ? 1 : 0))
        writer.append(filterDuplicates)
        writer.append(duration)
        writer.append(period)
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        enable = try reader.readUInt8("Enable") != 0
        filterDuplicates = try reader.readUInt8("Filter_Duplicates")
        duration = try reader.readUInt16("Duration")
        period = try reader.readUInt16("Period")
    }
}
