import BluewireGATT

/// Raises a link's security or obtains authorization (pairing, encryption, an application prompt).
///
/// `BluetoothHost` has no pairing yet (the Security Manager runs on the engine's `EngineHost`), so on
/// a `BluetoothHost` link the authorizer is the application's: typically it proves itself to the
/// peripheral at the application level (the OTA example writes an access token), once per link. When
/// `BluetoothHost` gains pairing, an authorizer that pairs or encrypts plugs in here unchanged.
public protocol OperationAuthorizer: Sendable {
    /// Returns once operations with `requirements` may succeed. Called before every such operation, so
    /// it should return at once when the link is already secure enough.
    func authorize(for requirements: OperationRequirements) async throws
}

/// Calls an authorizer before every operation that declares `.authorization`, and optionally once
/// more, followed by a single retry, when an operation fails because the server wants more security
/// (Insufficient Authentication / Encryption / Authorization / Encryption Key Size Too Short: Core
/// Vol 3 Part C §10.3.2 has the client pair or encrypt, then retry the request).
///
/// Attach it to a `RemotePeripheral` (`attach(_:)`) so that every operation queued there is authorized
/// on whatever link it runs on, including a new link after a reconnection. The authorizer is the
/// application's until `BluetoothHost` can pair (see `OperationAuthorizer`).
public struct AutoAuthorizeDecorator: OperationQueueDecorator {
    public let authorizer: any OperationAuthorizer
    public let retryAfterInsufficientSecurity: Bool

    public init(authorizer: any OperationAuthorizer, retryAfterInsufficientSecurity: Bool = true) {
        self.authorizer = authorizer
        self.retryAfterInsufficientSecurity = retryAfterInsufficientSecurity
    }

    public func decorate<Operation: GATTOperation>(_ operation: Operation) -> any GATTOperation<Operation.Result> {
        let first = operation.requirements.contains(.authorization)
        guard first || retryAfterInsufficientSecurity else { return operation }
        return AutoAuthorizeOperation(
            operation, authorizer: authorizer, authorizeFirst: first, retryAfterInsufficientSecurity: retryAfterInsufficientSecurity)
    }
}

/// `wrapped`, with the authorizer called first and/or after a lack-of-security error (then retried once).
public struct AutoAuthorizeOperation<Wrapped: GATTOperation>: GATTOperation {
    public typealias Result = Wrapped.Result
    public let wrapped: Wrapped
    public let authorizer: any OperationAuthorizer
    public let authorizeFirst: Bool
    public let retryAfterInsufficientSecurity: Bool

    public init(
        _ wrapped: Wrapped, authorizer: any OperationAuthorizer, authorizeFirst: Bool, retryAfterInsufficientSecurity: Bool
    ) {
        self.wrapped = wrapped
        self.authorizer = authorizer
        self.authorizeFirst = authorizeFirst
        self.retryAfterInsufficientSecurity = retryAfterInsufficientSecurity
    }

    public var requirements: OperationRequirements { wrapped.requirements }

    public func execute(on context: any ATTRequestPerformer) async throws -> Wrapped.Result {
        if authorizeFirst { try await authorizer.authorize(for: requirements) }
        do {
            return try await wrapped.execute(on: context)
        } catch where retryAfterInsufficientSecurity && isInsufficientSecurity(error) {
            // Authorizing again after authorizing first would only repeat what already did not help.
            guard !authorizeFirst else { throw error }
            try await authorizer.authorize(for: requirements.union(.authorization))
            return try await wrapped.execute(on: context)
        }
    }
}

/// Whether `error` is a server's refusal for lack of security, however the layers above wrapped it.
func isInsufficientSecurity(_ error: any Error) -> Bool {
    switch error {
    case let error as GATTClientError: error.isInsufficientSecurity
    case GATTError.procedure(let error): error.isInsufficientSecurity
    case RemotePeripheralError.gatt(.procedure(let error)): error.isInsufficientSecurity
    default: false
    }
}
