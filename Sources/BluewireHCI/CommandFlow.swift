import BluewireCore

/// HCI command flow control (Core Vol 4 Part E §4.4), sans I/O.
///
/// The host may only send as many commands as the controller's last Num_HCI_Command_Packets allows
/// (one before the first answer). Commands wait in a queue for credit; each one sent gets a
/// deadline. Command Complete and Command Status answer the oldest in-flight command with the same
/// opcode; a non-zero status becomes `CommandError.failed` naming the status.
///
/// Drive it with `enqueue`, send what `nextToSend(now:)` returns, feed every Command Complete and
/// Command Status to `handle(_:)`, and call `handleTimeouts(now:)` at `nextDeadline`.
public struct CommandFlow: Sendable {
    /// A command that was sent and awaits its answer.
    public struct InFlight: Hashable, Sendable {
        public var id: CommandID
        public var command: HCICommand
        public var deadline: MonotonicInstant
    }

    @usableFromInline struct Queued: Hashable, Sendable {
        var id: CommandID
        var command: HCICommand
        var timeout: TimeSpan
    }

    /// Commands the host may send now (Num_HCI_Command_Packets from the latest answer, less those sent since).
    public private(set) var credits: Int = 1
    public let defaultTimeout: TimeSpan
    public private(set) var inFlight: [InFlight] = []
    @usableFromInline var queue: [Queued] = []
    var nextID: UInt64 = 1

    public init(defaultTimeout: TimeSpan = .seconds(2)) {
        self.defaultTimeout = defaultTimeout
    }

    /// Commands waiting for credit.
    public var queuedCount: Int { queue.count }

    /// Queues a command; it is sent by `nextToSend(now:)` once there is credit.
    @discardableResult
    public mutating func enqueue(_ command: HCICommand, timeout: TimeSpan? = nil) -> CommandID {
        let id = CommandID(rawValue: nextID)
        nextID += 1
        queue.append(Queued(id: id, command: command, timeout: timeout ?? defaultTimeout))
        return id
    }

    /// The next command to write to the transport, if credit allows; its deadline starts now.
    public mutating func nextToSend(now: MonotonicInstant) -> (id: CommandID, command: HCICommand)? {
        guard credits > 0, !queue.isEmpty else { return nil }
        let next = queue.removeFirst()
        credits -= 1
        inFlight.append(InFlight(id: next.id, command: next.command, deadline: now + next.timeout))
        return (next.id, next.command)
    }

    /// Takes credits from Command Complete / Command Status and resolves the matching command.
    /// Other events, and answers that match no command (opcode 0x0000, a capture that starts
    /// mid-stream), only update credits and return nil.
    public mutating func handle(_ event: HCIEvent) -> CommandCompletion? {
        switch event {
        case .commandComplete(let cc):
            credits = Int(cc.numHCICommandPackets)
            guard let index = inFlight.firstIndex(where: { $0.command.opcode == cc.commandOpcode }) else { return nil }
            let entry = inFlight.remove(at: index)
            let result: Result<CommandResponse, CommandError>
            if let status = cc.status {
                result = status.isSuccess ? .success(.complete(cc)) : .failure(.failed(cc.commandOpcode, status))
            } else {
                result = .failure(.malformedResponse(cc.commandOpcode, DecodeError(
                    .truncated(needed: 1, available: 0), layer: "hci", field: "Status", offset: 5)))
            }
            return CommandCompletion(id: entry.id, command: entry.command, result: result)
        case .commandStatus(let cs):
            credits = Int(cs.numHCICommandPackets)
            guard let index = inFlight.firstIndex(where: { $0.command.opcode == cs.commandOpcode }) else { return nil }
            let entry = inFlight.remove(at: index)
            let result: Result<CommandResponse, CommandError> =
                cs.status.isSuccess ? .success(.status(cs)) : .failure(.failed(cs.commandOpcode, cs.status))
            return CommandCompletion(id: entry.id, command: entry.command, result: result)
        default:
            return nil
        }
    }

    /// The earliest deadline of an in-flight command.
    public var nextDeadline: MonotonicInstant? {
        var earliest: MonotonicInstant? = nil
        for entry in inFlight {
            if let current = earliest, current <= entry.deadline { continue }
            earliest = entry.deadline
        }
        return earliest
    }

    /// Fails every in-flight command whose deadline is at or before `now`.
    ///
    /// A command that never got an answer never returned its credit either; to keep the stack
    /// moving the flow assumes at least one credit afterwards, as BlueZ does on its command timeout.
    public mutating func handleTimeouts(now: MonotonicInstant) -> [CommandCompletion] {
        var expired: [CommandCompletion] = []
        inFlight.removeAll { entry in
            guard entry.deadline <= now else { return false }
            expired.append(CommandCompletion(id: entry.id, command: entry.command, result: .failure(.timeout(entry.command.opcode))))
            return true
        }
        if !expired.isEmpty { credits = max(credits, 1) }
        return expired
    }

    /// Fails every in-flight and queued command as cancelled and starts over with one credit
    /// (after a Hardware Error, or when the transport is reopened).
    public mutating func cancelAll() -> [CommandCompletion] {
        var out: [CommandCompletion] = []
        for entry in inFlight {
            out.append(CommandCompletion(id: entry.id, command: entry.command, result: .failure(.cancelled(entry.command.opcode))))
        }
        for entry in queue {
            out.append(CommandCompletion(id: entry.id, command: entry.command, result: .failure(.cancelled(entry.command.opcode))))
        }
        inFlight.removeAll()
        queue.removeAll()
        credits = 1
        return out
    }
}
