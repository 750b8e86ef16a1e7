import BluewireCore

/// Why an HCI command failed, naming the command (and the status) so a log line says what happened.
public enum CommandError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No Command Complete or Command Status arrived before the deadline. Controllers may ignore
    /// commands they do not know (bumble answers vendor commands with nothing at all).
    case timeout(HCIOpcode)
    /// The controller answered with a non-zero status (Core Vol 1 Part F).
    case failed(HCIOpcode, HCIStatus)
    /// The answer was too short or malformed for the command's return parameters.
    case malformedResponse(HCIOpcode, DecodeError)
    /// The command was dropped before an answer (the flow was reset, or the controller reported
    /// a hardware error).
    case cancelled(HCIOpcode)

    public var opcode: HCIOpcode {
        switch self {
        case .timeout(let o), .failed(let o, _), .malformedResponse(let o, _), .cancelled(let o): o
        }
    }

    public var description: String {
        switch self {
        case .timeout(let o): "\(o): no response (timeout)"
        case .failed(let o, let status): "\(o) failed: \(status)"
        case .malformedResponse(let o, let error): "\(o): malformed response: \(error)"
        case .cancelled(let o): "\(o): cancelled"
        }
    }
}

/// A controller's answer to a command: Command Complete with return parameters, or Command Status
/// for commands whose result comes later in another event (Core Vol 4 Part E §4.4).
public enum CommandResponse: Hashable, Sendable {
    case complete(CommandComplete)
    case status(CommandStatus)

    /// Decodes Command Complete return parameters as `R`; a Command Status, or return parameters too
    /// short for `R`, is `.malformedResponse`.
    public func returnParameters<R: CommandReturnParameters>(_ type: R.Type, opcode: HCIOpcode) throws(CommandError) -> R {
        switch self {
        case .complete(let cc):
            do {
                return try cc.returnParameters(R.self)
            } catch {
                throw .malformedResponse(opcode, error)
            }
        case .status:
            throw .malformedResponse(opcode, DecodeError(.unsupported(0x0F), layer: "hci", field: "Event_Code", offset: 0))
        }
    }
}

/// Identifies one command handed to `CommandFlow`, so its result can be routed back to the caller.
public struct CommandID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var rawValue: UInt64
    @inlinable public init(rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (lhs: CommandID, rhs: CommandID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "#\(rawValue)" }
}

/// The outcome of one command: its identity, its opcode, and the answer or the failure.
public struct CommandCompletion: Hashable, Sendable {
    public var id: CommandID
    public var command: HCICommand
    public var result: Result<CommandResponse, CommandError>

    public init(id: CommandID, command: HCICommand, result: Result<CommandResponse, CommandError>) {
        self.id = id
        self.command = command
        self.result = result
    }

    public var opcode: HCIOpcode { command.opcode }

    /// Decodes the return parameters of a successful Command Complete as `R`.
    public func returnParameters<R: CommandReturnParameters>(_ type: R.Type) throws(CommandError) -> R {
        switch result {
        case .success(let response): return try response.returnParameters(R.self, opcode: opcode)
        case .failure(let error): throw error
        }
    }
}
