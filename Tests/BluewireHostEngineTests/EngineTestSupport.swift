import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import HostTestSupport
import Testing

extension EngineDriver {
    /// Bring-up replayed strictly from `Captures/bumble_host_bringup.btsnoop`: each command the
    /// engine writes must equal the capture's next host → controller packet, and the capture's
    /// controller → host packets are fed in between.
    mutating func bringUpFromBumbleCapture() throws -> ControllerInfo {
        let id = try startFromBumbleCapture()
        #expect(unread.isEmpty)
        guard case .success(.started(let info))? = result(id) else {
            Issue.record("bring-up did not finish: \(String(describing: result(id)))")
            throw EngineTestError.bringUpFailed
        }
        return info
    }

    /// Asks for `.start` and feeds the capture's bring-up strictly (as `bringUpFromBumbleCapture`),
    /// checking nothing after it: what the engine does next (with `clearsControllerLeftoversAtStart`,
    /// more commands before `start` completes) is the caller's to drive. Returns the request's id.
    mutating func startFromBumbleCapture() throws -> HostRequestID {
        let id = perform(.start)
        for (direction, packet) in try Captures.packets("bumble_host_bringup.btsnoop") {
            switch direction {
            case .hostToController:
                let sent = takeWritten()
                #expect(sent == [packet], "host wrote \(sent.map { Array($0.payload) }), capture has \(Array(packet.payload))")
            case .controllerToHost:
                controller(packet)
            }
        }
        return id
    }

    /// Answers every command the engine writes, as bumble's controller does, until it writes no
    /// more; returns the opcodes in the order they went out.
    @discardableResult
    mutating func answerCommands(limit: Int = 50) -> [HCIOpcode] {
        var opcodes: [HCIOpcode] = []
        while opcodes.count < limit {
            let commands = takeWritten().filter { $0.type == .command }
            guard !commands.isEmpty else { break }
            for command in commands {
                if let opcode = ControllerBytes.opcode(command) { opcodes.append(opcode) }
                if let answer = ControllerBytes.answer(command) { controller(answer) }
            }
        }
        return opcodes
    }

    /// The ATT PDUs in the ACL packets written since the last take.
    mutating func takeATT() -> [[UInt8]] {
        takeWritten().compactMap(ControllerBytes.attPayload)
    }
}
