import BluewireGATT

/// Raises a link's security or obtains authorization (pairing, encryption, an application prompt).
///
/// `SecurityManagerAuthorizer` raises the link's security through the Security Manager (encrypts with
/// a bond, or pairs); an application may bring its own, e.g. one that proves itself to the peripheral
/// at the application level (the OTA example writes an access token), once per link.
public protocol OperationAuthorizer: Sendable {
    /// Returns once operations with `requirements` may succeed. Called before every such operation, so
    /// it should return at once when the link is already secure enough. Throws how it failed as the
    /// queue's own end (`.failed` with its description, or `.disconnected` / `.notConnected` when the
    /// link went, so that auto-connect may resume), which each operation reports in its own error type.
    func authorize(for requirements: OperationRequirements) async throws(OperationError)
}

/// Calls an authorizer before every operation that declares `.authorization`, and optionally once
/// more, followed by a single retry, when an operation fails because the server wants more security
/// (Insufficient Authentication / Encryption / Authorization / Encryption Key Size Too Short: Core
/// Vol 3 Part C §10.3.2 has the client pair or encrypt, then retry the request).
///
/// Attach it to a `RemotePeripheral` (`attach(_:)`) so that every operation queued there is authorized
/// on whatever link it runs on, including a new link after a reconnection: with
/// `SecurityManagerAuthorizer`, the first refused operation pairs and the next links encrypt with the bond.
public struct AutoAuthorizeDecorator: OperationQueueDecorator {
    public let authorizer: any OperationAuthorizer
    public let retryAfterInsufficientSecurity: Bool

    public init(authorizer: any OperationAuthorizer, retryAfterInsufficientSecurity: Bool = true) {
        self.authorizer = authorizer
        self.retryAfterInsufficientSecurity = retryAfterInsufficientSecurity
    }

    public func decorate<Operation: GATTOperation>(_ operation: Operation) -> any GATTOperation<Operation.Result, Operation.Failure> {
        let first = operation.requirements.contains(.authorization)
        guard first || retryAfterInsufficientSecurity else { return operation }
        return AutoAuthorizeOperation(
            operation, authorizer: authorizer, authorizeFirst: first, retryAfterInsufficientSecurity: retryAfterInsufficientSecurity)
    }
}

/// `wrapped`, with the authorizer called first and/or after a lack-of-security error (then retried once).
public struct AutoAuthorizeOperation<Wrapped: GATTOperation>: GATTOperation {
    public typealias Result = Wrapped.Result
    public typealias Failure = Wrapped.Failure
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

    public nonisolated(nonsending) func execute(on context: any ATTRequestPerformer) async throws(Wrapped.Failure) -> Wrapped.Result {
        if authorizeFirst { try await authorize(for: requirements) }
        do throws(Wrapped.Failure) {
            return try await wrapped.execute(on: context)
        } catch where retryAfterInsufficientSecurity && error.isInsufficientSecurity {
            // Authorizing again after authorizing first would only repeat what already did not help.
            guard !authorizeFirst else { throw error }
            try await authorize(for: requirements.union(.authorization))
            return try await wrapped.execute(on: context)
        }
    }

    /// The authorizer's failure, in the operation's error type.
    private nonisolated(nonsending) func authorize(for requirements: OperationRequirements) async throws(Wrapped.Failure) {
        do throws(OperationError) {
            try await authorizer.authorize(for: requirements)
        } catch {
            throw Wrapped.Failure(error)
        }
    }
}
