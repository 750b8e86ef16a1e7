import BluewireCore
import BluewireHCI

/// How a Host brings up and drives its controller.
public struct HostConfiguration: Sendable {
    /// The random static address to use (Core Vol 6 Part B §1.3.2.1). Bumble's link routes ACL by
    /// random address, so Bluewire always uses one. Nil picks one from the system's random source.
    public var randomAddress: BluetoothAddress?
    /// Timeout for each HCI command (Core leaves command timeouts to the host; BlueZ uses 2 s too).
    public var commandTimeout: TimeSpan
    /// ATT MTU this host offers and accepts (Core Vol 3 Part F §3.2.8 allows 23…517).
    public var preferredMTU: UInt16
    /// How long `connect` waits for LE Connection Complete before cancelling.
    public var connectionTimeout: TimeSpan
    /// Whether `start()` ends by clearing what a previous program left running on the controller:
    /// scanning, advertising, a pending LE Create Connection (`clearControllerLeftovers()`, in a fixed
    /// place at the end of bring-up). Reset does that on a conforming controller (Core Vol 4 Part E
    /// §7.3.2), but not on every one (bumble's clears none of it): without it, a program stopped by a
    /// signal leaves its advertising on, and the next program's scan or connection attempt is
    /// refused with Command Disallowed. On by default, as in every `bluewire` command; off only to
    /// replay a capture recorded by a host that did not do it, or to find the leftovers in place.
    public var clearsControllerLeftoversAtStart: Bool

    public init(
        randomAddress: BluetoothAddress? = nil,
        commandTimeout: TimeSpan = .seconds(2),
        preferredMTU: UInt16 = 517,
        connectionTimeout: TimeSpan = .seconds(10),
        clearsControllerLeftoversAtStart: Bool = true
    ) {
        self.randomAddress = randomAddress
        self.commandTimeout = commandTimeout
        self.preferredMTU = preferredMTU
        self.connectionTimeout = connectionTimeout
        self.clearsControllerLeftoversAtStart = clearsControllerLeftoversAtStart
    }
}
