import BluewireCore

/// The parameters of an L2CAP Connection Parameter Update Request (Core Vol 3 Part A §4.20), in
/// the units of the HCI LE Connection Update command (Vol 4 Part E §7.8.18) that carries them out.
public struct ConnectionParameterUpdate: Hashable, Sendable {
    /// Minimum connection interval, units of 1.25 ms (6–3200: 7.5 ms to 4 s).
    public var intervalMin: UInt16
    /// Maximum connection interval, units of 1.25 ms (6–3200).
    public var intervalMax: UInt16
    /// Peripheral latency in connection events (0–499).
    public var latency: UInt16
    /// Supervision timeout, units of 10 ms (10–3200: 100 ms to 32 s).
    public var timeoutMultiplier: UInt16

    @inlinable
    public init(intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeoutMultiplier: UInt16) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.latency = latency
        self.timeoutMultiplier = timeoutMultiplier
    }

    /// Whether the values are in the ranges the specification allows (Vol 3 Part A §4.20, Vol 6
    /// Part B §4.5.1 and Vol 4 Part E §7.8.18): intervals 6–3200 with min ≤ max, latency ≤ 499,
    /// timeout 10–3200, and a supervision timeout longer than (1 + latency) × interval max × 2 so the
    /// link survives the latency the peripheral asks for.
    public var isValid: Bool {
        guard (6...3200).contains(intervalMin), (6...3200).contains(intervalMax), intervalMin <= intervalMax,
              latency <= 499, (10...3200).contains(timeoutMultiplier)
        else { return false }
        // timeout × 10 ms > (1 + latency) × intervalMax × 1.25 ms × 2  ⇔  timeout × 4 > (1 + latency) × intervalMax
        return UInt32(timeoutMultiplier) * 4 > (1 + UInt32(latency)) * UInt32(intervalMax)
    }
}
