import BluewireCore
import Synchronization

/// A simulated LE radio joining any number of `VirtualController`s in one process.
///
/// Advertising reaches scanners, connection requests reach advertisers, and ACL data and control
/// procedures flow between connected pairs, all in virtual time on `clock`: nothing happens between
/// two calls unless the test advances the clock. The link is deterministic: controllers are visited in
/// the order they were added, timers fire in deadline order (ties in the order they were set), so the same
/// host inputs always produce the same controller outputs.
///
/// Thread safety: the whole link is guarded by one lock, so controllers may be driven from different tasks
/// (for instance two Host actors). Output handlers and violation handlers run with that lock held and
/// must not call back into the link (yielding to an `AsyncStream` continuation is fine).
public final class VirtualLink: Sendable {
    /// The virtual time the link runs on.
    public let clock: TestClock

    struct Guarded {
        var world: LinkWorld
        /// The earliest deadline a clock wake-up is already scheduled for.
        var armedWakeup: MonotonicInstant?
        /// Tasks in `waitForLinkLoss`, by the central's connection handle.
        var lossWaiters: [(centralHandle: UInt16, continuation: CheckedContinuation<Void, Never>)] = []

        /// The loss waiters whose link is now lost or gone, removed from the list.
        mutating func takeLossWaiters() -> [CheckedContinuation<Void, Never>] {
            guard !lossWaiters.isEmpty else { return [] }
            var ready: [CheckedContinuation<Void, Never>] = []
            lossWaiters.removeAll { waiter in
                guard Self.isLost(world, centralHandle: waiter.centralHandle) else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }

        static func isLost(_ world: LinkWorld, centralHandle: UInt16) -> Bool {
            world.connections.values.first { $0.ends[0].handle == centralHandle }?.isLost ?? true
        }
    }

    let guarded: Mutex<Guarded>

    public init(clock: TestClock = TestClock(), timing: Timing = .immediate) {
        self.clock = clock
        guarded = Mutex(Guarded(world: LinkWorld(timing: timing, now: clock.monotonicNow)))
    }

    /// Adds a controller to the link, powered on and waiting for HCI_Reset like a real one.
    public func addController(_ configuration: VirtualController.Configuration) -> VirtualController {
        let index = withWorld { $0.addController(configuration) }
        return VirtualController(link: self, index: index, configuration: configuration)
    }

    /// Adds a controller with the default configuration and this public address.
    public func addController(publicAddress: BluetoothAddress) -> VirtualController {
        addController(VirtualController.Configuration(publicAddress: publicAddress))
    }

    /// The timing model (see `Timing`). Changing it affects what happens from now on.
    public var timing: Timing {
        get { withWorld { $0.timing } }
        set { withWorld { $0.timing = newValue } }
    }

    /// A snapshot of one connection on the link, for assertions.
    public struct ConnectionInfo: Sendable, Hashable {
        /// Index of the central's and the peripheral's controller (in the order they were added).
        public var central: Int
        public var centralHandle: UInt16
        public var peripheral: Int
        public var peripheralHandle: UInt16
        /// 1.25 ms units, events, 10 ms units.
        public var interval: UInt16
        public var latency: UInt16
        public var supervisionTimeout: UInt16
        public var centralToPeripheralPHY: UInt8
        public var peripheralToCentralPHY: UInt8
        /// connEffectiveMaxTxOctets in each direction.
        public var centralToPeripheralOctets: UInt16
        public var peripheralToCentralOctets: UInt16
        /// The link was lost and waits for its supervision timeout.
        public var isLost: Bool

        public init(
            central: Int, centralHandle: UInt16, peripheral: Int, peripheralHandle: UInt16, interval: UInt16,
            latency: UInt16, supervisionTimeout: UInt16, centralToPeripheralPHY: UInt8, peripheralToCentralPHY: UInt8,
            centralToPeripheralOctets: UInt16, peripheralToCentralOctets: UInt16, isLost: Bool
        ) {
            self.central = central
            self.centralHandle = centralHandle
            self.peripheral = peripheral
            self.peripheralHandle = peripheralHandle
            self.interval = interval
            self.latency = latency
            self.supervisionTimeout = supervisionTimeout
            self.centralToPeripheralPHY = centralToPeripheralPHY
            self.peripheralToCentralPHY = peripheralToCentralPHY
            self.centralToPeripheralOctets = centralToPeripheralOctets
            self.peripheralToCentralOctets = peripheralToCentralOctets
            self.isLost = isLost
        }
    }

    /// Every open connection, in the order they were made.
    public var connections: [ConnectionInfo] {
        withWorld { world in
            world.connections.keys.sorted().compactMap { id -> ConnectionInfo? in
                guard let c = world.connections[id] else { return nil }
                return ConnectionInfo(
                    central: c.ends[0].controller, centralHandle: c.ends[0].handle, peripheral: c.ends[1].controller,
                    peripheralHandle: c.ends[1].handle, interval: c.interval, latency: c.latency,
                    supervisionTimeout: c.supervisionTimeout, centralToPeripheralPHY: c.ends[0].txPHY,
                    peripheralToCentralPHY: c.ends[1].txPHY, centralToPeripheralOctets: c.ends[0].effectiveTxOctets,
                    peripheralToCentralOctets: c.ends[1].effectiveTxOctets, isLost: c.isLost)
            }
        }
    }

    /// Returns once the radio link of the central's connection `centralHandle` is lost (an injected
    /// fault, a reset peer: it waits for its supervision timeout) or gone, at once if it already is.
    /// The link checks this after everything a controller does, so a test awaits the loss itself
    /// instead of polling `connections`.
    public func waitForLinkLoss(centralHandle: UInt16) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let lost = guarded.withLock { guarded -> Bool in
                if Guarded.isLost(guarded.world, centralHandle: centralHandle) { return true }
                guarded.lossWaiters.append((centralHandle, continuation))
                return false
            }
            if lost { continuation.resume() }
        }
    }

    /// Runs `body` on the world at the clock's current time, then makes sure the clock will wake the link
    /// for its earliest timer.
    func withWorld<Result: Sendable>(_ body: (LinkWorld) -> Result) -> Result {
        let now = clock.monotonicNow
        let (result, wakeup, lost) = guarded.withLock { guarded -> (Result, MonotonicInstant?, [CheckedContinuation<Void, Never>]) in
            if now > guarded.world.now { guarded.world.now = now }
            let result = body(guarded.world)
            return (result, Self.wakeupToArm(&guarded), guarded.takeLossWaiters())
        }
        arm(wakeup)
        for waiter in lost { waiter.resume() }
        return result
    }

    /// The clock reached a deadline the link asked for: run whatever timers are due.
    private func wake() {
        let now = clock.monotonicNow
        let (wakeup, lost) = guarded.withLock { guarded -> (MonotonicInstant?, [CheckedContinuation<Void, Never>]) in
            if now > guarded.world.now { guarded.world.now = now }
            if let armed = guarded.armedWakeup, armed <= now { guarded.armedWakeup = nil }
            guarded.world.fireDueTimers()
            return (Self.wakeupToArm(&guarded), guarded.takeLossWaiters())
        }
        arm(wakeup)
        for waiter in lost { waiter.resume() }
    }

    private static func wakeupToArm(_ guarded: inout Guarded) -> MonotonicInstant? {
        guard let next = guarded.world.nextDeadline else { return nil }
        if let armed = guarded.armedWakeup, armed <= next { return nil }
        guarded.armedWakeup = next
        return next
    }

    private func arm(_ deadline: MonotonicInstant?) {
        guard let deadline else { return }
        clock.schedule(at: deadline) { [weak self] in self?.wake() }
    }
}
