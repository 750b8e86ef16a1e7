import Bluewire
import BluewireCore

/// `VirtualClock` is the Host's clock in tests: pass it straight to `BluetoothHost(transport:configuration:clock:)`,
/// to `TimeoutOperation`, or to a paced `ReplayTransport`.
///
/// ```swift
/// let clock = VirtualClock()
/// let link = VirtualLink(clock: clock)
/// let host = BluetoothHost(transport: VirtualTransport(controller: link.addController(publicAddress: a)),
///                          clock: clock)
/// ```
///
/// The host's timers (command timeouts, the 30 s ATT transaction timeout, scan durations) then run in
/// the test's virtual time: they fire only when the test advances the clock past them, so a host on a
/// `VirtualLink` and the link itself share one notion of "now". There is one test clock, not an adapter
/// per use: the virtual controller's scheduled actions, the Host's sleepers and the operation queue's
/// timeouts all wait in the same deadline-ordered list, so advancing time runs them in one order.
extension VirtualClock: HostClock {
    /// The current virtual time (the same as `monotonicNow`).
    public var now: MonotonicInstant { monotonicNow }
}

extension VirtualClock {
    /// The clock itself: `VirtualClock` is a `HostClock`, so the adapter this used to return is gone.
    @available(*, deprecated, message: "VirtualClock is a HostClock: pass the clock itself")
    public var hostClock: VirtualClock { self }
}

/// The clock itself, for code written against the removed `TestHostClock` adapter.
@available(*, deprecated, message: "VirtualClock is a HostClock: pass the clock itself")
public func TestHostClock(_ clock: VirtualClock) -> VirtualClock { clock }
