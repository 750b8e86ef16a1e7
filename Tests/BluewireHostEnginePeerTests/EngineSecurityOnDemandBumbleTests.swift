import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHostEngine
import BluewireSMP
import Foundation
import PeerTestSupport
import Testing

/// The engine as central reads characteristics a bumble peripheral protects (bumble's own permission
/// checks: READ_REQUIRES_ENCRYPTION, READ_REQUIRES_AUTHENTICATION), with no `.pair` from the application:
/// the refusal makes the engine pair (or encrypt) and send the read again, Core Vol 3 Part C §10.3.2.
/// One case per pairing method of the security issue's matrix, each a real pairing with bumble's SMP.
@Suite("Host engine: security raised on demand by GATT reads, every pairing method, against bumble", .serialized)
struct EngineSecurityOnDemandBumbleTests {
    struct Method: CustomStringConvertible, Sendable {
        var name: String
        /// bumble_link.py --pairing IO:SC:MITM for the peripheral.
        var bumble: String
        var engine: PairingConfiguration
        /// The level the pairing gives.
        var level: LinkSecurityLevel
        var description: String { name }

        /// Authenticated pairings satisfy both characteristics; Just Works only the encrypted one.
        var authenticated: Bool { level >= .authenticated }
    }

    static let methods: [Method] = [
        Method(name: "SC Just Works", bumble: "3:1:0",
               engine: PairingConfiguration(ioCapability: .noInputNoOutput), level: .encryptedUnauthenticated),
        Method(name: "SC Numeric Comparison", bumble: "1:1:1",
               engine: PairingConfiguration(ioCapability: .displayYesNo), level: .secureConnectionsAuthenticated),
        Method(name: "SC Passkey Entry, Bluewire displays", bumble: "2:1:1",
               engine: PairingConfiguration(ioCapability: .displayOnly), level: .secureConnectionsAuthenticated),
        Method(name: "SC Passkey Entry, Bluewire enters", bumble: "0:1:1",
               engine: PairingConfiguration(ioCapability: .keyboardOnly), level: .secureConnectionsAuthenticated),
        Method(name: "legacy Just Works", bumble: "3:0:0",
               engine: PairingConfiguration(ioCapability: .noInputNoOutput, secureConnections: false),
               level: .encryptedUnauthenticated),
        Method(name: "legacy Passkey Entry, Bluewire enters", bumble: "0:0:1",
               engine: PairingConfiguration(ioCapability: .keyboardOnly, secureConnections: false), level: .authenticated),
    ]

    static let database = #"""
    {"services": [{"uuid": "FFE0", "characteristics": [
      {"uuid": "FFE1", "properties": ["READ"], "permissions": "READABLE,READ_REQUIRES_ENCRYPTION", "value": "e1"},
      {"uuid": "FFE2", "properties": ["READ"], "permissions": "READABLE,READ_REQUIRES_AUTHENTICATION", "value": "e2"}]}]}
    """#

    @Test("a read refused for security pairs, encrypts and is answered; the other protected read follows", arguments: methods)
    func readProtectedCharacteristics(_ method: Method) async throws {
        let gatt = FileManager.default.temporaryDirectory.appendingPathComponent("engine-ondemand-\(UUID().uuidString.prefix(8)).json")
        try Data(Self.database.utf8).write(to: gatt)
        defer { try? FileManager.default.removeItem(at: gatt) }
        let arguments = ["--peripheral", "--name", "bumble-protected", "--interval", "50", "--gatt", gatt.path, "--pairing", method.bumble]
        try await withBumblePeer([.tcp], arguments: arguments) { peer in
            let log = PeerEventLog()
            let lines = peer.events
            let collector = Task { for await line in lines { log.append(line) } }
            defer { collector.cancel() }
            let (runner, handle, _) = try EngineSecurityBumbleTests.connectedCentral(
                peer, address: BluetoothAddress(value: 0xC3_5E_17_00_E6_01, type: .random), pairing: method.engine)

            runner.perform(.gatt(connection: handle, .discoverAll), id: 3)
            #expect(runner.run(seconds: 10) { $0.result(3) != nil })
            guard case .success(.services(let services))? = runner.result(3),
                  let service = services.first(where: { $0.service.uuid == BluetoothUUID(0xFFE0) }),
                  let encrypted = service.characteristics.first(where: { $0.characteristic.uuid == BluetoothUUID(0xFFE1) }),
                  let authenticated = service.characteristics.first(where: { $0.characteristic.uuid == BluetoothUUID(0xFFE2) })
            else {
                Issue.record("discovery: \(String(describing: runner.result(3)))")
                return
            }
            // The read that needs the most this method can give goes first: it is what makes the engine pair.
            let first = method.authenticated ? authenticated : encrypted
            let second = method.authenticated ? encrypted : authenticated
            let start = ContinuousClock.now
            runner.perform(.gatt(connection: handle, .read(handle: first.characteristic.valueHandle)), id: 4)
            var answered = false
            let done = runner.run(seconds: 20) { runner in
                Self.answerUser(runner, peer: peer, log: log, handle: handle, answered: &answered)
                return runner.result(4) != nil
            }
            #expect(done, "\(method): no answer to the read; events \(runner.events.suffix(6)), bumble \(log.all.suffix(4))")
            print("engine central \(method) on demand with bumble: read answered after pairing in \(ContinuousClock.now - start)")
            #expect(runner.result(4) == .success(.value(method.authenticated ? [0xE2] : [0xE1])))
            #expect(runner.engine.security(connection: handle)?.level == method.level)
            #expect(runner.events.filter { if case .paired = $0 { return true }; return false }.count == 1)
            #expect(runner.run(seconds: 5) { _ in log.first("paired") != nil }, "bumble did not report the pairing")

            runner.perform(.gatt(connection: handle, .read(handle: second.characteristic.valueHandle)), id: 5)
            #expect(runner.run(seconds: 10) { $0.result(5) != nil })
            // bumble counts any pairing as authenticated (device.py on_pairing sets connection.authenticated
            // whatever the method), so after Just Works its authentication-protected value is readable too;
            // the engine's own server refuses it (SecurityEngineTests). Either way: one pairing, no second.
            #expect(runner.result(5) == .success(.value(method.authenticated ? [0xE1] : [0xE2])))
            #expect(runner.events.filter { if case .paired = $0 { return true }; return false }.count == 1)
        }
    }

    @Test("a bonded peer: the refused read encrypts with the stored key on the next connection, no pairing")
    func bondedReconnectionEncryptsOnDemand() async throws {
        let gatt = FileManager.default.temporaryDirectory.appendingPathComponent("engine-ondemand-\(UUID().uuidString.prefix(8)).json")
        try Data(Self.database.utf8).write(to: gatt)
        defer { try? FileManager.default.removeItem(at: gatt) }
        let arguments = ["--peripheral", "--name", "bumble-protected", "--interval", "50", "--gatt", gatt.path, "--pairing", "3:1:0"]
        try await withBumblePeer([.tcp], arguments: arguments) { peer in
            let log = PeerEventLog()
            let lines = peer.events
            let collector = Task { for await line in lines { log.append(line) } }
            defer { collector.cancel() }
            let (runner, handle, peripheral) = try EngineSecurityBumbleTests.connectedCentral(
                peer, address: BluetoothAddress(value: 0xC3_5E_17_00_E6_02, type: .random),
                pairing: PairingConfiguration(ioCapability: .noInputNoOutput))
            runner.perform(.gatt(connection: handle, .discoverAll), id: 3)
            #expect(runner.run(seconds: 10) { $0.result(3) != nil })
            guard case .success(.services(let services))? = runner.result(3),
                  let encrypted = services.flatMap(\.characteristics).first(where: { $0.characteristic.uuid == BluetoothUUID(0xFFE1) })
            else {
                Issue.record("discovery: \(String(describing: runner.result(3)))")
                return
            }
            let valueHandle = encrypted.characteristic.valueHandle
            runner.perform(.gatt(connection: handle, .read(handle: valueHandle)), id: 4)
            #expect(runner.run(seconds: 15) { $0.result(4) != nil })
            #expect(runner.result(4) == .success(.value([0xE1])))
            #expect(runner.engine.bonds.map(\.peer) == [peripheral])

            runner.perform(.disconnect(handle: handle, reason: .remoteUserTerminatedConnection), id: 5)
            #expect(runner.run(seconds: 10) { $0.result(5) != nil })
            let second = try EngineSecurityBumbleTests.connect(runner, to: peripheral, id: 6)
            // A bonded peer's handles are known from the first link (Core Vol 3 Part G §2.5.2).
            runner.perform(.gatt(connection: second, .cachedDiscovery), id: 70)
            runner.perform(.gatt(connection: second, .read(handle: valueHandle)), id: 7)
            #expect(runner.run(seconds: 15) { $0.result(7) != nil })
            #expect(runner.result(7) == .success(.value([0xE1])))
            #expect(runner.events.contains(.encryptionChanged(connection: second, level: .encryptedUnauthenticated, keySize: 16)))
            // Encrypted with the bond: one pairing in all, on either side.
            #expect(runner.events.filter { if case .paired = $0 { return true }; return false }.count == 1)
            #expect(runner.run(seconds: 5) { _ in log.all.filter { $0["encryption"] as? Int == 1 }.count == 2 })
            #expect(log.all.filter { $0["paired"] != nil }.count == 1)
        }
    }

    /// Plays both users: passes a passkey one side displays to the other, accepts a numeric comparison
    /// (checking that both sides show the same number).
    static func answerUser(
        _ runner: SocketEngineRunner, peer: BumblePeer, log: PeerEventLog, handle: UInt16, answered: inout Bool
    ) {
        guard !answered else { return }
        for event in runner.events {
            switch event {
            case .passkeyDisplay(let connection, let passkey) where connection == handle:
                guard log.first("passkey_wanted") != nil else { return }
                peer.send(line: #"{"op": "passkey", "value": \#(passkey)}"#)
                answered = true
            case .passkeyRequest(let connection) where connection == handle:
                guard let shown = log.first("passkey")?["passkey"] as? Int else { return }
                runner.perform(.passkeyReply(connection: handle, passkey: UInt32(shown)), id: 90)
                answered = true
            case .numericComparison(let connection, let value) where connection == handle:
                guard let shown = log.first("compare")?["compare"] as? Int else { return }
                #expect(shown == Int(value), "both sides must show the same number")
                runner.perform(.confirmReply(connection: handle, accepted: shown == Int(value)), id: 90)
                answered = true
            default:
                continue
            }
        }
    }
}
