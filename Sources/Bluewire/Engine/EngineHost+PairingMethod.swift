import BluewireHostEngine
import BluewireSMP

extension EngineHost {
    /// The association model of the last pairing that succeeded on the link (Core Vol 3 Part H
    /// §2.3.5.1; `HostEngine.pairingMethod(connection:)`), nil when none did (encrypted with a bond, or
    /// not at all): with `security(of:)`, what an application tells its user about the key it has.
    public func pairingMethod(of connection: UInt16) -> PairingMethod? {
        engine.pairingMethod(connection: connection)
    }
}
