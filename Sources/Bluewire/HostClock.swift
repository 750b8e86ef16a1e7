import BluewireCore
import Glibc

/// The clock the Host reads and sleeps on: Bluewire's one clock abstraction.
///
/// The sans-I/O layers take the current time as a value and return deadlines; the Host is the one
/// place that reads a clock, through this protocol, so that tests and replays can drive time by hand
/// (a 30 s ATT timeout then takes microseconds). Everything above the sans-I/O layers that waits on
/// time uses it too: the Host's timers, the operation queue's `TimeoutOperation`, throughput timing
/// and a paced replay. So one injected clock moves all of them together. There is one production
/// clock (`SystemHostClock`) and one test clock (BluewireTesting's `TestClock`, advanced by hand);
/// time is counted in `MonotonicInstant` microseconds, the unit the sans-I/O layers already use,
/// instead of Swift's `Clock`/`Duration`, whose 128-bit arithmetic the Host would pay on every packet.
public protocol HostClock: Sendable {
    /// The current instant.
    var now: MonotonicInstant { get }
    /// Suspends until `deadline`; throws `CancellationError` if the task is cancelled first.
    func sleep(until deadline: MonotonicInstant) async throws
}

/// The machine's monotonic clock (`ContinuousClock`), counted from when this value was made.
public struct SystemHostClock: HostClock {
    let origin: ContinuousClock.Instant
    /// The same origin read as a `timespec` of CLOCK_BOOTTIME, the clock `ContinuousClock` reads on
    /// Linux: `now` is asked for on every packet, and going through `Duration` costs 128-bit
    /// arithmetic each time where two subtractions do.
    let originTime: timespec

    public init() {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        originTime = time
        origin = ContinuousClock.now
    }

    public var now: MonotonicInstant {
        var time = timespec()
        clock_gettime(CLOCK_BOOTTIME, &time)
        let seconds = Int64(time.tv_sec - originTime.tv_sec)
        let nanoseconds = Int64(time.tv_nsec - originTime.tv_nsec)
        return MonotonicInstant(microseconds: seconds * 1_000_000 + nanoseconds / 1_000)
    }

    public func sleep(until deadline: MonotonicInstant) async throws {
        try await ContinuousClock().sleep(until: origin.advanced(by: .microseconds(deadline.microseconds)), tolerance: nil)
    }
}
