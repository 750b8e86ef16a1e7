import BluewireCore

/// The clock the Host reads and sleeps on.
///
/// The sans-I/O layers take the current time as a value and return deadlines; the Host is the one
/// place that reads a clock, through this protocol, so that tests and replays can drive time by hand
/// (a 30 s ATT timeout then takes microseconds).
public protocol HostClock: Sendable {
    /// The current instant.
    var now: MonotonicInstant { get }
    /// Suspends until `deadline`; throws `CancellationError` if the task is cancelled first.
    func sleep(until deadline: MonotonicInstant) async throws
}

/// The machine's monotonic clock (`ContinuousClock`), counted from when this value was made.
public struct SystemHostClock: HostClock {
    let origin: ContinuousClock.Instant

    public init() { origin = ContinuousClock.now }

    public var now: MonotonicInstant {
        let elapsed = origin.duration(to: ContinuousClock.now)
        let (seconds, attoseconds) = elapsed.components
        return MonotonicInstant(microseconds: seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
    }

    public func sleep(until deadline: MonotonicInstant) async throws {
        try await ContinuousClock().sleep(until: origin.advanced(by: .microseconds(deadline.microseconds)), tolerance: nil)
    }
}
