import BluewireHCI

/// The connection parameters a link uses now, as LE Connection Complete and LE Connection Update
/// Complete report them (Core Vol 4 Part E §7.7.65.1, §7.7.65.3).
public struct HostConnectionParameters: Hashable, Sendable {
    /// Connection interval in units of 1.25 ms (0x0006…0x0C80: 7.5 ms to 4 s).
    public var interval: UInt16
    /// Peripheral latency: connection events the peripheral may skip (0x0000…0x01F3).
    public var latency: UInt16
    /// Supervision timeout in units of 10 ms (0x000A…0x0C80: 100 ms to 32 s).
    public var supervisionTimeout: UInt16

    public init(interval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }
}

/// A link parameter outside the range the Core specification allows for the command that would
/// carry it. The engine refuses the request and sends nothing: a controller would answer Invalid HCI
/// Command Parameters (0x12), or worse, take a value its peer cannot use.
public enum LinkParameterError: Error, Hashable, Sendable {
    /// TX_Octets outside 0x001B…0x00FB (27–251 octets; LE Set Data Length, Core Vol 4 Part E §7.8.33).
    case txOctets(UInt16)
    /// TX_Time outside 0x0148…0x4290 (328–17,040 µs; §7.8.33).
    case txTime(UInt16)
    /// Connection_Interval_Min or _Max outside 0x0006…0x0C80, or Min above Max (LE Connection Update, §7.8.18).
    case connectionInterval(min: UInt16, max: UInt16)
    /// Max_Latency above 0x01F3 (§7.8.18).
    case latency(UInt16)
    /// Supervision_Timeout outside 0x000A…0x0C80 (§7.8.18).
    case supervisionTimeout(UInt16)
    /// The supervision timeout is not longer than (1 + Max_Latency) × Connection_Interval_Max × 2, as
    /// §7.8.18 requires: a peripheral using all its latency would let the link time out.
    case supervisionTimeoutTooShort(timeout: UInt16, latency: UInt16, intervalMax: UInt16)
    /// Min_CE_Length above Max_CE_Length (§7.8.18).
    case connectionEventLength(min: UInt16, max: UInt16)
}

extension LinkParameterError {
    /// Checks LE Set Data Length's suggested values (Core Vol 4 Part E §7.8.33).
    static func checkDataLength(txOctets: UInt16, txTime: UInt16) -> LinkParameterError? {
        guard (0x001B...0x00FB).contains(txOctets) else { return .txOctets(txOctets) }
        guard (0x0148...0x4290).contains(txTime) else { return .txTime(txTime) }
        return nil
    }

    /// Checks LE Connection Update's parameters (Core Vol 4 Part E §7.8.18).
    static func checkConnectionUpdate(_ parameters: LEConnectionParameters) -> LinkParameterError? {
        let intervals: ClosedRange<UInt16> = 0x0006...0x0C80
        let (min, max) = (parameters.connectionIntervalMin, parameters.connectionIntervalMax)
        guard intervals.contains(min), intervals.contains(max), min <= max else {
            return .connectionInterval(min: min, max: max)
        }
        guard parameters.maxLatency <= 0x01F3 else { return .latency(parameters.maxLatency) }
        let timeout = parameters.supervisionTimeout
        guard (0x000A...0x0C80).contains(timeout) else { return .supervisionTimeout(timeout) }
        // Timeout × 10 ms > (1 + latency) × max × 1.25 ms × 2, that is timeout × 4 > (1 + latency) × max.
        guard UInt32(timeout) * 4 > (1 + UInt32(parameters.maxLatency)) * UInt32(max) else {
            return .supervisionTimeoutTooShort(timeout: timeout, latency: parameters.maxLatency, intervalMax: max)
        }
        guard parameters.minCELength <= parameters.maxCELength else {
            return .connectionEventLength(min: parameters.minCELength, max: parameters.maxCELength)
        }
        return nil
    }
}
