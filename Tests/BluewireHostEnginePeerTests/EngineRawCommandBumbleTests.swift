import BluewireCore
import BluewireHCI
import BluewireHostEngine
import PeerTestSupport
import Testing

/// `.command` on a real bumble controller over TCP: a command it knows and a vendor one it does not.
///
/// bumble's controller (0.0.236) parses an unknown opcode as a command without a known completion and
/// sends nothing back for it (Docs/Testing.md, "The peers"): the vendor command must end on its own
/// timeout, and a command asked for after it must still run.
@Suite("Host engine raw commands on a bumble controller")
struct EngineRawCommandBumbleTests {
    @Test("vendor opcode 0xFC01 gets no answer and times out on its own timeout; Read BD_ADDR asked after it completes")
    func rawCommands() async throws {
        let address = BluetoothAddress(value: 0xC3_5E_17_00_E1_0C, type: .random)
        let vendor = HCIOpcode(rawValue: 0xFC01)
        try await withBumblePeer([.tcp]) { peer in
            let runner = try SocketEngineRunner(
                transport: peer.transports[0], configuration: HostEngineConfiguration(randomAddress: address))
            runner.perform(.start, id: 1)
            #expect(runner.run(seconds: 10) { $0.result(1) != nil })
            guard case .success(.started)? = runner.result(1) else {
                Issue.record("bring-up: \(String(describing: runner.result(1)))")
                return
            }
            runner.perform(.command(.raw(opcode: vendor, parameters: [0x01]), timeout: .milliseconds(500)), id: 2)
            runner.perform(.command(.readBDADDR), id: 3)
            #expect(runner.run(seconds: 10) { $0.result(3) != nil })
            print("bumble: vendor 0xFC01 \(String(describing: runner.result(2))), Read BD_ADDR \(String(describing: runner.result(3)))")
            #expect(runner.result(2) == .failure(.command(.timeout(vendor))))
            guard case .success(.commandResponse(let response))? = runner.result(3) else {
                Issue.record("Read BD_ADDR: \(String(describing: runner.result(3)))")
                return
            }
            let bdaddr = try response.returnParameters(ReadBDADDRReturn.self, opcode: .readBDADDR)
            #expect(bdaddr.status == .success)
        }
    }
}
