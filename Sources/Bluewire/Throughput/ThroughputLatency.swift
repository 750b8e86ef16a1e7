import BluewireCore

/// Round-trip times of acknowledged packets (a Write Request to its Write Response), summarised as
/// percentiles.
public struct LatencyPercentiles: Sendable, Hashable {
    /// How many round trips were measured.
    public var samples: Int
    public var minimum: TimeSpan
    /// Nearest-rank percentiles: the smallest sample that at least p % of samples do not exceed.
    public var p50: TimeSpan
    public var p90: TimeSpan
    public var p99: TimeSpan
    public var maximum: TimeSpan

    public init(samples: Int, minimum: TimeSpan, p50: TimeSpan, p90: TimeSpan, p99: TimeSpan, maximum: TimeSpan) {
        self.samples = samples
        self.minimum = minimum
        self.p50 = p50
        self.p90 = p90
        self.p99 = p99
        self.maximum = maximum
    }

    /// The percentiles of `samples` (in any order); nil when there are none.
    public init?(_ samples: [TimeSpan]) {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        func rank(_ percent: Int) -> TimeSpan {
            // Nearest rank: ceil(p/100 × n), 1-based.
            let index = (percent * sorted.count + 99) / 100
            return sorted[Swift.max(index, 1) - 1]
        }
        self.init(samples: sorted.count, minimum: sorted[0], p50: rank(50), p90: rank(90), p99: rank(99), maximum: sorted[sorted.count - 1])
    }
}
