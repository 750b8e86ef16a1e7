import BluewireATT
import BluewireCore
import BluewireGATT

// Left out of builds with BLUEWIRE_NO_CENTRAL (the peripheral firmware image): no GATT client.
#if !BLUEWIRE_NO_CENTRAL

/// ATT PDUs an application builds itself (`GATTClientRequest.attRequest`, `.attCommand`): a GATT
/// client of its own runs its procedures through the engine's bearer, so its requests are serialised
/// with the engine's (one outstanding per bearer, Core Vol 3 Part F §3.3.2) and timed out the same way.
/// Only a client's PDUs may go this way: a response, notification, indication or confirmation belongs
/// to the local server's side of the bearer, whose rules (§3.3.2, §3.4.7) the engine keeps itself.
enum ATTPDUKind {
    /// Why `pdu` may not go as a client request; nil when it may.
    static func refusal(request pdu: ATTPDU) -> HostEngineError? {
        pdu.opcode.kind == .request ? nil : .att(.notARequest(pdu.opcode))
    }

    /// Why `pdu` may not go as a client command; nil when it may.
    static func refusal(command pdu: ATTPDU) -> HostEngineError? {
        pdu.opcode.kind == .command ? nil : .att(.notACommand(pdu.opcode))
    }
}

extension HostEngine {
    /// `.attCommand` on the link's ATT bearer: sent at once (a command holds no transaction, §3.4.5.3),
    /// after the commands and requests already handed to the bearer. Completes at once.
    mutating func sendATTCommand(_ id: HostRequestID, _ connection: UInt16, _ pdu: ATTPDU) {
        if let refusal = ATTPDUKind.refusal(command: pdu) { return complete(id, .failure(refusal)) }
        guard let index = links.index(forKey: connection) else { return complete(id, .failure(.unknownConnection(connection))) }
        do throws(ATTBearerError) {
            try links.values[index].bearer.send(command: pdu)
        } catch {
            return complete(id, .failure(.att(error)))
        }
        drainBearer(handle: connection)
        complete(id, .success(.done))
    }

    /// `.cancelGATT`: the operation leaves the link's queue if it waits behind another (the head one
    /// has started: its request is on the air or it waits for security it asked for).
    mutating func cancelGATT(_ id: HostRequestID, _ connection: UInt16, _ request: HostRequestID) {
        guard let index = links.index(forKey: connection) else { return complete(id, .failure(.unknownConnection(connection))) }
        let operations = links.values[index].clientOperations
        if let position = operations.indices.dropFirst().first(where: { operations[$0].id == request }) {
            links.values[index].clientOperations.remove(at: position)
            complete(request, .failure(.cancelled))
        }
        complete(id, .success(.done))
    }
}

#endif  // !BLUEWIRE_NO_CENTRAL
