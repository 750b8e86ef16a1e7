import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
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

enum EngineTestError: Error { case bringUpFailed }

/// A small database: one service 0xFFF0 with characteristic 0xFFF1 (read, write, notify, indicate)
/// at value handle 3 and its CCCD at 4, and 0xFFF2 (read) with a 100-octet value at handle 6.
enum TestDatabase {
    static let service = BluetoothUUID(0xFFF0)
    static let valueHandle: UInt16 = 3
    static let cccdHandle: UInt16 = 4
    static let longHandle: UInt16 = 6
    static let longValue = (0..<100).map { UInt8($0) }

    static func make() throws -> GATTDatabase {
        var builder = GATTDatabaseBuilder()
        try builder.addService(service)
        try builder.addCharacteristic(
            BluetoothUUID(0xFFF1), properties: [.read, .write, .notify, .indicate], permissions: [.read, .write],
            value: .cached([0x2A]))
        try builder.addCharacteristic(BluetoothUUID(0xFFF2), properties: [.read], permissions: [.read], value: .cached(longValue))
        return builder.build()
    }
}
