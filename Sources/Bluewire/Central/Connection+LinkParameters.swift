import BluewireCore
import BluewireHCI

extension Connection {
    /// Asks the controller for longer LE data packets on this link (LE Set Data Length, Core Vol 4
    /// Part E §7.8.33). The new lengths, if the link layer agrees on any, arrive later as
    /// `HostEvent.dataLengthChanged`.
    /// - Throws: `HostError.command` when the controller refuses (some answer a bare status;
    ///   Unknown Connection Identifier once the link is gone, Invalid HCI Command Parameters out of
    ///   the ranges); the link keeps working with the lengths it had.
    public func requestDataLength(txOctets: UInt16 = 251, txTime: UInt16 = 2120) async throws(HostError) {
        try await host.engineRequestDataLength(host.engineHost, handle: handle, txOctets: txOctets, txTime: txTime)
    }

    /// Asks for a PHY change on this link (LE Set PHY, §7.8.49), e.g. `[.le2M]` both ways. The
    /// result arrives as `HostEvent.phyUpdated`. `timeout` bounds the wait for the Command Status:
    /// some controllers never answer this command.
    /// - Throws: `HostError.command` when the controller refuses or does not answer in time.
    public func requestPHY(
        tx: LEPHYSet = [.le2M], rx: LEPHYSet = [.le2M], timeout: TimeSpan = .seconds(1)
    ) async throws(HostError) {
        try await host.engineRequestPHY(host.engineHost, handle: handle, tx: tx, rx: rx, timeout: timeout)
    }

    /// Asks the controller to change this link's connection parameters (LE Connection Update,
    /// §7.8.18); the result arrives as `HostEvent.connectionUpdated`. It returns once LE Connection
    /// Update Complete has come (§7.7.65.3, after that event), and fails with its status when the
    /// update failed.
    /// - Throws: `HostError.command` when the controller refuses (Unknown Connection Identifier once
    ///   the link is gone, Invalid HCI Command Parameters for values out of range).
    public func updateParameters(_ parameters: LEConnectionParameters) async throws(HostError) {
        try await host.engineUpdateParameters(host.engineHost, handle: handle, parameters)
    }
}
