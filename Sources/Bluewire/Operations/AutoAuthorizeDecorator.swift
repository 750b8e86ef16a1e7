import BluewireGATT

/// Raises a link's security or obtains authorization (pairing, encryption, an application prompt).
public protocol OperationAuthorizer: Sendable {
    /// Returns once operations with `requirements` may succeed. Called before every such operation, so
    /// it should return at once when the link is already secure enough.
    func authorize(for requirements: OperationRequirements) async throws
}

/// Calls an authorizer before every operation that declares `.authorization`, and optionally once
/// more, followed by a single retry, when an operation fails because the server wants more security
/// (Insufficient Authentication / Encryption / Authorization / Encryption Key Size Too Short: Core
/// Vol 3 Part C §10.3.2 has the client pair or encrypt, then retry the request).
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
        } catch let error as GATTClientError where retryAfterInsufficientSecurity && error.isInsufficientSecurity {
            // Authorizing again after authorizing first would only repeat what already did not help.
            guard !authorizeFirst else { throw error }
            try await authorizer.authorize(for: requirements.union(.authorization))
            return try await wrapped.execute(on: context)
        }
    }
}
