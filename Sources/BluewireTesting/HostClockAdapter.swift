import Bluewire
import BluewireCore

/// A `TestClock` as the clock a `BluetoothHost` (or a paced replay) reads and sleeps on.
///
/// ```swift
/// let clock = TestClock()
/// let link = VirtualLink(clock: clock)
/// let host = BluetoothHost(transport: VirtualTransport(controller: link.addController(publicAddress: a)),
///                          clock: TestHostClock(clock))   // or clock.hostClock
/// ```
///
/// The host's timers (command timeouts, the 30 s ATT transaction timeout, scan durations) then run in
/// the test's virtual time: they fire only when the test advances the clock past them, so a host on a
/// `VirtualLink` and the link itself share one notion of "now".
public struct TestHostClock: HostClock {
    /// The virtual clock read and slept on.
    public let clock: TestClock

    public init(_ clock: TestClock) { self.clock = clock }

    public var now: MonotonicInstant { clock.monotonicNow }

    public func sleep(until deadline: MonotonicInstant) async throws {
        try await clock.sleep(until: deadline)
    }
}

extension TestClock {
    /// This clock as a `HostClock`, for `BluetoothHost(transport:configuration:clock:)`.
    public var hostClock: TestHostClock { TestHostClock(self) }
}
