import BluewireHostEngine

/// An `OperationAuthorizer` that raises the link's security through the Security Manager (Core
/// Vol 3 Part C §10.3.2: a client refused with Insufficient Authentication or Encryption encrypts or
/// pairs, then retries): a central with a bond for the peer encrypts with it (Vol 3 Part H §2.4.4),
/// otherwise it pairs with the host's `PairingConfiguration` (Just Works unless the configuration
/// asks for more). A link already encrypted is left as it is.
///
/// With `AutoAuthorizeDecorator` on a `RemotePeripheral`, the first operation the server refuses
/// pairs the link and runs again; on every later link the bond encrypts without pairing:
///
/// ```swift
/// let lock = RemotePeripheral(host: host, peer: address)
/// await lock.attach(AutoAuthorizeDecorator(authorizer: SecurityManagerAuthorizer(lock)))
/// let state = try await lock.read(lockState)
/// ```
///
/// The host needs `EngineHost.configureSecurity` first.
public struct SecurityManagerAuthorizer: OperationAuthorizer {
    let link: @Sendable () -> EngineConnection?

    /// Authorizes on whatever link `peripheral` has when an operation runs.
    public init(_ peripheral: RemotePeripheral) {
        link = { [weak peripheral] in peripheral?.link?.connection }
    }

    /// Authorizes on `connection`.
    public init(connection: EngineConnection) {
        link = { connection }
    }

    public func authorize(for requirements: OperationRequirements) async throws(OperationError) {
        guard let connection = link() else { throw .notConnected }
        if await connection.securityLevel > .unencrypted { return }
        do throws(HostEngineError) {
            do throws(HostEngineError) {
                _ = try await connection.encrypt()
            } catch .security(.notBonded) {
                _ = try await connection.pair()
            }
        } catch {
            switch error {
            case .disconnected(let reason): throw .disconnected(reason: reason.rawValue)
            case .unknownConnection, .staleConnection, .notRunning, .transportEnded: throw .notConnected
            default: throw .connectionFailed(error)
            }
        }
    }
}
