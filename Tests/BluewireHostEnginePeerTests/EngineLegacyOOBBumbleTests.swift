import BluewireCore
import BluewireHostEngine
import BluewireSMP
import Foundation
import PeerTestSupport
import Testing

/// LE legacy OOB pairing (Core Vol 3 Part H §2.3.5.4) between the engine and bumble's Security Manager
/// (`--pairing IO:0:MITM:TK` in Tests/Peers/bumble_pairing.py), both given the same TK out of band.
@Suite("Host engine legacy OOB pairing with bumble", .serialized)
struct EngineLegacyOOBBumbleTests {
    /// The TK most significant octet first, as the engine takes it; bumble's order is the reverse.
    static let tk: [UInt8] = (0..<16).map { UInt8(truncatingIfNeeded: 0x5A + $0 * 13) }

    @Test("engine central, bumble peripheral, same TK: authenticated legacy pairing, keys match bumble's; another TK fails")
    func centralLegacyOOB() async throws {
        for sameKey in [true, false] {
            var bumbleKey = Self.tk
            if !sameKey { bumbleKey[3] ^= 0x01 }
            let tkHex = EngineSecurityBumbleTests.hex(bumbleKey.reversed()) ?? ""
            try await withBumblePeer(
                [.tcp], arguments: ["--peripheral", "--name", "bumble-oob", "--interval", "50", "--pairing", "3:0:0:\(tkHex)"]
            ) { peer in
                let log = PeerEventLog()
                let lines = peer.events
                let collector = Task { for await line in lines { log.append(line) } }
                defer { collector.cancel() }
                let (runner, handle, _) = try EngineSecurityBumbleTests.connectedCentral(
                    peer, address: BluetoothAddress(value: 0xC3_5E_17_00_E5_0A, type: .random),
                    pairing: PairingConfiguration(
                        ioCapability: .noInputNoOutput, secureConnections: false, legacyOOBTemporaryKey: Self.tk))
                runner.perform(.pair(connection: handle), id: 3)
                if sameKey {
                    #expect(runner.run(seconds: 15) { $0.result(3) != nil && log.first("paired") != nil })
                    // OOB is MITM-protected (§2.3.5.4): level 3, not the Just Works the IO capabilities give.
                    #expect(runner.result(3) == .success(.secured(.authenticated)))
                    let keys = try #require(EngineSecurityBumbleTests.pairedEvent(runner))
                    let bumbleKeys = log.first("paired")?["paired"] as? [String: Any]
                    #expect(keys.authenticated)
                    #expect(EngineSecurityBumbleTests.hex(keys.peerKeys.longTermKey) == bumbleKeys?["ltk_central"] as? String,
                            "bumble: \(String(describing: bumbleKeys))")
                    #expect(log.first("encryption")?["encryption"] as? Int == 1)
                } else {
                    #expect(runner.run(seconds: 15) { $0.result(3) != nil })
                    #expect(runner.result(3) == .failure(.security(.pairingFailed(.remote(.confirmValueFailed)))))
                    #expect(runner.run(seconds: 5) { _ in log.first("pairing_failed") != nil })
                    #expect(runner.engine.bonds.isEmpty)
                }
            }
        }
    }

    @Test("engine peripheral paired by a bumble central with the same TK: authenticated legacy OOB")
    func peripheralLegacyOOB() async throws {
        let address = BluetoothAddress(value: 0xC3_5E_17_00_E5_0B, type: .random)
        let tkHex = EngineSecurityBumbleTests.hex(Self.tk.reversed()) ?? ""
        try await withBumblePeer([.tcp], arguments: ["--central", address.hexString, "--manual", "--pairing", "3:0:0:\(tkHex)"]) { peer in
            let log = PeerEventLog()
            let lines = peer.events
            let collector = Task { for await line in lines { log.append(line) } }
            defer { collector.cancel() }
            let runner = try SocketEngineRunner(
                transport: peer.transports[0], configuration: HostEngineConfiguration(randomAddress: address))
            runner.engine.configureSecurity(EngineSecurityBumbleTests.engineSecurity(PairingConfiguration(
                ioCapability: .noInputNoOutput, secureConnections: false, legacyOOBTemporaryKey: Self.tk)))
            runner.perform(.start, id: 1)
            #expect(runner.run(seconds: 10) { $0.result(1) != nil })
            runner.perform(.startAdvertising(.named("engine-oob")), id: 2)
            #expect(runner.run(seconds: 10) { $0.result(2) != nil })
            peer.send(line: #"{"central": 0, "op": "connect", "discover": false}"#)
            #expect(runner.run(seconds: 15) { _ in log.first("connected") != nil })
            peer.send(line: #"{"central": 0, "op": "pair"}"#)
            #expect(runner.run(seconds: 15) { runner in
                EngineSecurityBumbleTests.pairedEvent(runner) != nil && log.first("paired") != nil
            })
            let handle = try #require(runner.engine.connectionHandles.first)
            #expect(runner.engine.security(connection: handle)?.level == .authenticated)
            #expect(EngineSecurityBumbleTests.pairedEvent(runner)?.authenticated == true)
            #expect(log.first("encryption")?["encryption"] as? Int == 1)
        }
    }
}
