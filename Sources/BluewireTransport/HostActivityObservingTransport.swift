/// A transport that wants to know what its host is still doing with the packets that pass through it.
///
/// The host runs on tasks, and two of its steps cannot be seen from the transport:
/// - **Acting on a packet it took.** `inbound` hands the host a packet, and the host decides what to
///   do about it a moment later, on its own executor.
/// - **Writing.** A packet leaves the host's engine, waits in the host's outbound queue, then reaches
///   `send` on the host's writer task. The timer that watches for the packet's answer is armed at the
///   end of the same drain, so a clock's sleeper can appear while the packet is still in that queue.
///
/// Test transports need both. A replay's virtual clock fires the host's next timer once the host is
/// idle (`ReplayClock`): it must not count the host idle while it still acts on a packet or writes
/// one, or it fires a timeout the recording host never reached (a command's, before the command was
/// even written). A test bench waits until nothing moves before it advances virtual time: it learns
/// that from these calls instead of polling.
///
/// The Host (`EngineHost`, under `BluetoothHost`) makes these calls on any transport that conforms.
/// A transport that does not conform costs it one nil check per packet and per inbound batch.
public protocol HostActivityObservingTransport: HCITransport {
    /// The host will report its activity through this protocol from now on (it opened).
    func hostReportsActivity()
    /// The host has acted on every inbound packet it took so far: the drain after them ended.
    func hostActedOnInbound()
    /// The host queued one packet for `send`.
    func hostQueuedPacket()
    /// `send` returned, or threw, for one packet `hostQueuedPacket` announced.
    func hostHandedOffPacket()
}
