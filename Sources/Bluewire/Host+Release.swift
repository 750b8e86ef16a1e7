import BluewireCore
import BluewireHCI

extension BluetoothHost {
    /// Leaves the controller as the next program expects to find it, then closes the Host: cancels
    /// a connection attempt in progress (LE Create Connection Cancel), stops scanning and
    /// advertising, disconnects every link (HCI Disconnect, reason Remote User Terminated
    /// Connection) and waits at most `timeout` for the Disconnection Complete events.
    ///
    /// A controller keeps its state when the host goes away: an LE link left up occupies the
    /// controller (and the peer) until supervision timeout or the next Reset, and an emulated
    /// controller such as bumble's clears nothing even on Reset (its next LE Create Connection is
    /// answered with Command Disallowed). Programs call this on every exit path; `close()` alone
    /// only closes the transport.
    public func release(timeout: TimeSpan = .seconds(2)) async {
        await engineRelease(engineHost, timeout: timeout)
    }

    /// Clears what a previous program may have left running on the controller, where HCI allows it
    /// without knowing what that was: scanning, advertising (legacy and extended set 0 alike are
    /// disabled by their enable commands with no sets) and a pending LE Create Connection. Reset
    /// does this on a conforming controller (Core Vol 4 Part E §7.3.2); bumble's Reset clears none of
    /// it. Each command's refusal (nothing to cancel, command unknown) is expected and ignored.
    /// Connections left up cannot be found through HCI: their handles are unknown to a new host.
    public func clearControllerLeftovers() async {
        await engineClearControllerLeftovers(engineHost)
    }
}
