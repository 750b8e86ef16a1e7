import BluewireHCI
import BluewireHostEngine

extension EngineConnection {
    /// Suggests the largest link-layer payload (`txOctets`, 27–251) and its air time (`txTime`,
    /// 328–17,040 µs) for this link (LE Set Data Length, Core Vol 4 Part E §7.8.33). Returns once the
    /// controller accepted the suggestion; the link layers then negotiate (Core Vol 6 Part B §5.1.9) and
    /// the lengths they agree on arrive as `HostEngineEvent.dataLengthChanged` (LE Data Length Change,
    /// §7.7.65.7), or not at all when nothing changes. The engine already asks for 251 octets once a
    /// link comes up, on a controller with the Data Length Extension.
    /// - Throws: `.linkParameters` for values outside those ranges (nothing is sent);
    ///   `.command(.failed(.leSetDataLength, status))` when the controller refuses (bumble's answers
    ///   Unknown HCI Command), and the link keeps the lengths it had; `.unknownConnection(handle)` or
    ///   `.disconnected(reason)` once the link is gone.
    public func setDataLength(txOctets: UInt16 = 251, txTime: UInt16 = 2120) async throws(HostEngineError) {
        _ = try await host.perform(.setDataLength(connection: link.handle, txOctets: txOctets, txTime: txTime), on: self).get()
    }

    /// Asks for new connection parameters on this link (LE Connection Update, Core Vol 4 Part E
    /// §7.8.18) and returns the ones in force afterwards, from LE Connection Update Complete
    /// (§7.7.65.3): the controller picks an interval within the bounds given. As central the controller
    /// updates the link itself; as peripheral it asks the central (Connection Parameters Request
    /// procedure, Core Vol 6 Part B §5.1.7), which may refuse.
    /// - Throws: `.linkParameters` when a value is outside §7.8.18's ranges, including a supervision
    ///   timeout not longer than (1 + latency) × interval max × 2 (nothing is sent);
    ///   `.command(.failed(.leConnectionUpdate, status))` with the status the controller reports (Unsupported
    ///   Remote Feature 0x1A from a peer without the procedure, for one); `.disconnected(reason)` when the
    ///   link goes down first; `.unknownConnection(handle)`.
    public func updateParameters(_ parameters: LEConnectionParameters) async throws(HostEngineError) -> HostConnectionParameters {
        let completion = try await host.perform(.updateConnection(connection: link.handle, parameters), on: self).get()
        guard case .connectionParameters(let now) = completion else { throw .command(.failed(.leConnectionUpdate, .unspecifiedError)) }
        return now
    }
}

extension EngineHost {
    /// A link as the engine holds it now: its connection interval follows LE Connection Update Complete
    /// (Core Vol 4 Part E §7.7.65.3), unlike the `HostConnection` reported when it came up. Nil once it is gone.
    public func link(_ handle: UInt16) -> HostConnection? { engine.connection(handle) }
}
