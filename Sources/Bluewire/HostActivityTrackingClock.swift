import BluewireCore

/// A virtual clock that moves time by itself once the host is idle, and so must be told when the host
/// is still at work on something the clock cannot see.
///
/// The host runs on tasks, and two of its steps are invisible from outside:
/// - **Acting on a packet it took.** The transport hands the host a packet, and the host decides
///   what to do about it a moment later, on its own executor.
/// - **Writing.** A packet leaves the engine, waits in the host's outbound queue, then reaches
///   `HCITransport.send` on the host's writer task. The timer that watches for the packet's answer
///   is armed at the end of the same drain, so a clock's sleeper can appear while the packet is
///   still in that queue.
///
/// A clock that fires timers when the host looks idle (a replay's `ReplayClock`, which moves time to
/// the next deadline once the host has received everything and sent nothing more) would fire, in
/// either gap, a timeout the recording host never reached: a command's, before the command was even
/// written. Told of both, it counts the host as busy until the host has acted on what it took and the
/// transport has every packet the host queued.
///
/// The machine's clock (`SystemHostClock`) does not conform: the host then pays one nil check per
/// packet and per inbound batch.
public protocol HostActivityTrackingClock: HostClock {
    /// The host will report its activity through this protocol from now on (it opened).
    func hostReportsActivity()
    /// The host has acted on every inbound packet it took so far: the drain after them ended.
    func hostActedOnInbound()
    /// The host queued one packet for its transport's `send`.
    func hostQueuedPacket()
    /// The transport's `send` returned, or threw, for one packet `hostQueuedPacket` announced.
    func hostHandedOffPacket()
}
