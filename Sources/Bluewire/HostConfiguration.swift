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

    public init(
        randomAddress: BluetoothAddress? = nil,
        commandTimeout: TimeSpan = .seconds(2),
        preferredMTU: UInt16 = 517,
        connectionTimeout: TimeSpan = .seconds(10)
    ) {
        self.randomAddress = randomAddress
        self.commandTimeout = commandTimeout
        self.preferredMTU = preferredMTU
        self.connectionTimeout = connectionTimeout
    }
}
