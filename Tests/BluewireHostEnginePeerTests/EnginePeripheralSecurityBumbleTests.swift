import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHostEngine
import BluewireSMP
import Foundation
import PeerTestSupport
import Testing

/// The engine as peripheral serving characteristics that need encryption and authentication, a bumble
/// central reading them before and after pairing with each method of the security issue's matrix. The
/// engine's GATT server checks the link's real security (Core Vol 3 Part C §10.3.1): Insufficient
/// Encryption or Insufficient Authentication before, the values after; Just Works never authenticates.
@Suite("Host engine peripheral: protected attributes, every pairing method, a bumble central", .serialized)
struct EnginePeripheralSecurityBumbleTests {
    static let methods: [EngineSecurityOnDemandBumbleTests.Method] = [
        .init(name: "SC Just Works", bumble: "3:1:0",
              engine: PairingConfiguration(ioCapability: .noInputNoOutput), level: .encryptedUnauthenticated),
        .init(name: "SC Numeric Comparison", bumble: "1:1:1",
              engine: PairingConfiguration(ioCapability: .displayYesNo), level: .secureConnectionsAuthenticated),
        .init(name: "SC Passkey Entry, Bluewire displays", bumble: "2:1:1",
              engine: PairingConfiguration(ioCapability: .displayOnly), level: .secureConnectionsAuthenticated),
        .init(name: "SC Passkey Entry, Bluewire enters", bumble: "0:1:1",
              engine: PairingConfiguration(ioCapability: .keyboardOnly), level: .secureConnectionsAuthenticated),
        .init(name: "legacy Just Works", bumble: "3:0:0",
              engine: PairingConfiguration(ioCapability: .noInputNoOutput, secureConnections: false),
              level: .encryptedUnauthenticated),
        .init(name: "legacy Passkey Entry, Bluewire displays", bumble: "2:0:1",
              engine: PairingConfiguration(ioCapability: .displayOnly, secureConnections: false), level: .authenticated),
    ]

    @Test("reads refused before pairing with the right error, answered after as the method's level allows", arguments: methods)
    func protectedReads(_ method: EngineSecurityOnDemandBumbleTests.Method) async throws {
        let address = BluetoothAddress(value: 0xC3_5E_17_00_E7_01, type: .random)
        try await withBumblePeer([.tcp], arguments: ["--central", address.hexString, "--manual", "--pairing", method.bumble]) { peer in
            let log = PeerEventLog()
            let lines = peer.events
            let collector = Task { for await line in lines { log.append(line) } }
            defer { collector.cancel() }
            let runner = try SocketEngineRunner(
                transport: peer.transports[0], configuration: HostEngineConfiguration(randomAddress: address))
            runner.engine.configureSecurity(EngineSecurityBumbleTests.engineSecurity(method.engine))
            var builder = GATTDatabaseBuilder()
            try builder.addService(BluetoothUUID(0xFFE0))
            let encrypted = try builder.addCharacteristic(
                BluetoothUUID(0xFFE1), properties: [.read], permissions: [.readEncrypted], value: .cached([0xE1]))
            let authenticated = try builder.addCharacteristic(
                BluetoothUUID(0xFFE2), properties: [.read], permissions: [.readAuthenticated], value: .cached([0xE2]))
            runner.engine.setDatabase(builder.build())
            runner.perform(.start, id: 1)
            #expect(runner.run(seconds: 10) { $0.result(1) != nil })
            runner.perform(.startAdvertising(.named("engine-protected")), id: 2)
            #expect(runner.run(seconds: 10) { $0.result(2) != nil })
            peer.send(line: #"{"central": 0, "op": "connect", "discover": false}"#)
            #expect(runner.run(seconds: 15) { _ in log.first("connected") != nil })

            func read(_ handle: UInt16, _ count: Int) -> [String: Any]? {
                peer.send(line: #"{"central": 0, "op": "read", "handle": \#(handle)}"#)
                _ = runner.run(seconds: 10) { _ in log.all.filter { $0["read"] as? Int == Int(handle) }.count >= count }
                return log.all.filter { $0["read"] as? Int == Int(handle) }.dropFirst(count - 1).first
            }
            // Before pairing: the server's refusals (Vol 3 Part F §3.4.1.1 error codes 0x0F and 0x05).
            #expect(read(encrypted.valueHandle, 1)?["error"] as? Int == Int(ATTErrorCode.insufficientEncryption.rawValue))
            #expect(read(authenticated.valueHandle, 1)?["error"] as? Int == Int(ATTErrorCode.insufficientAuthentication.rawValue))

            peer.send(line: #"{"central": 0, "op": "pair"}"#)
            var answered = false
            let paired = runner.run(seconds: 20) { runner in
                Self.answerUser(runner, peer: peer, log: log, answered: &answered)
                return EngineSecurityBumbleTests.pairedEvent(runner) != nil && log.first("paired") != nil
            }
            #expect(paired, "\(method): events \(runner.events.suffix(6)), bumble \(log.all.suffix(4))")
            let handle = try #require(runner.engine.connectionHandles.first)
            #expect(runner.engine.security(connection: handle)?.level == method.level)

            #expect(read(encrypted.valueHandle, 2)?["value"] as? String == "e1")
            let second = read(authenticated.valueHandle, 2)
            if method.authenticated {
                #expect(second?["value"] as? String == "e2")
            } else {
                #expect(second?["error"] as? Int == Int(ATTErrorCode.insufficientAuthentication.rawValue))
            }
        }
    }

    /// Plays both users for the central-side pairing: the engine displays → bumble's user types it; bumble
    /// displays → the engine's user types it; Numeric Comparison → both accept the same number.
    static func answerUser(_ runner: SocketEngineRunner, peer: BumblePeer, log: PeerEventLog, answered: inout Bool) {
        guard !answered else { return }
        for event in runner.events {
            switch event {
            case .passkeyDisplay(_, let passkey):
                guard log.first("passkey_wanted") != nil else { return }
                peer.send(line: #"{"central": 0, "op": "passkey", "value": \#(passkey)}"#)
                answered = true
            case .passkeyRequest(let connection):
                guard let shown = log.first("passkey")?["passkey"] as? Int else { return }
                runner.perform(.passkeyReply(connection: connection, passkey: UInt32(shown)), id: 90)
                answered = true
            case .numericComparison(let connection, let value):
                guard let shown = log.first("compare")?["compare"] as? Int else { return }
                #expect(shown == Int(value), "both sides must show the same number")
                runner.perform(.confirmReply(connection: connection, accepted: shown == Int(value)), id: 90)
                answered = true
            default:
                continue
            }
        }
    }
}
