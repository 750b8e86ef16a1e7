import BluewireATT
import BluewireCore
import BluewireCrypto
import BluewireGATT
import BluewireHostEngine
import BluewireSMP
import Foundation
import HostTestSupport
import PeerTestSupport
import Testing

/// The engine as a peripheral with local privacy (Core Vol 3 Part C §10.7): it advertises from resolvable
/// private addresses made with its IRK and replaces them every rotation. A bumble central (bumble's own
/// Security Manager, key store and host-side address resolver) pairs with bonding over one private address,
/// receiving the engine's IRK and identity address (Identity Information and Identity Address Information,
/// Vol 3 Part H §3.6.4-5); after the engine rotated, bumble's scan sees a new private address that its
/// resolver maps to the identity (Vol 6 Part B §1.3.2.3), connects by the identity address and encrypts
/// with the stored LTK: no SMP PDU on the reconnection (Vol 3 Part H §2.4.4).
@Suite("Host engine peripheral with privacy: a bonded bumble central resolves a rotated address and reconnects", .serialized)
struct EnginePrivacyBumbleCentralTests {
    static let identity = BluetoothAddress(value: 0xC3_5E_17_00_EA_01, type: .random)
    static let irk: [UInt8] = (0..<16).map { UInt8(0x50 + $0) }

    /// The engine with its IRK and identity address to distribute, privacy on, a characteristic readable only
    /// over an encrypted link, advertising every 20 ms (so a bumble connection attempt rarely straddles a
    /// rotation).
    static func privatePeripheral(_ transport: String) throws -> (SocketEngineRunner, GATTCharacteristicHandles) {
        let runner = try SocketEngineRunner(transport: transport, configuration: HostEngineConfiguration(randomAddress: identity))
        runner.engine.configureSecurity(HostSecurityConfiguration(
            pairing: PairingConfiguration(ioCapability: .noInputNoOutput, identityResolvingKey: irk, identityAddress: identity.smpForm),
            crypto: SMPCrypto(SwiftCryptoSMP()), privacy: PrivacyConfiguration(rotationInterval: .milliseconds(1500))))
        var builder = GATTDatabaseBuilder()
        try builder.addService(BluetoothUUID(0xFFE0))
        let protected = try builder.addCharacteristic(
            BluetoothUUID(0xFFE1), properties: [.read], permissions: [.readEncrypted], value: .cached([0xE1, 0x0A]))
        runner.engine.setDatabase(builder.build())
        runner.perform(.start, id: 1)
        #expect(runner.run(seconds: 10) { $0.result(1) != nil })
        var advertisement = HostAdvertisement.named("engine-private")
        advertisement.intervalMin = 0x20
        advertisement.intervalMax = 0x20
        runner.perform(.startAdvertising(advertisement), id: 2)
        #expect(runner.run(seconds: 10) { $0.result(2) != nil })
        return (runner, protected)
    }

    /// bumble's scan until it reports an advertiser address not in `excluding`; stops the scan.
    static func scan(_ runner: SocketEngineRunner, _ peer: BumblePeer, _ log: PeerEventLog, excluding: [String]) -> [String: Any]? {
        let mark = log.all.count
        peer.send(line: #"{"central": 0, "op": "scan", "name": "engine-private"}"#)
        var found: [String: Any]?
        _ = runner.run(seconds: 15) { _ in
            found = log.all.dropFirst(mark).first { ($0["advertisement"] as? String).map { !excluding.contains($0) } ?? false }
            return found != nil
        }
        let stopped = log.all.count
        peer.send(line: #"{"central": 0, "op": "stop_scan"}"#)
        #expect(runner.run(seconds: 5) { _ in log.all.dropFirst(stopped).contains { $0["scanning"] != nil } })
        return found
    }

    static func pairings(_ runner: SocketEngineRunner) -> Int {
        runner.events.filter { if case .paired = $0 { return true }; return false }.count
    }

    @Test("bonded over one private address; after a rotation bumble resolves the new one, connects by identity and encrypts without pairing",
          arguments: [[], ["--legacy-reports"]])
    func bumbleCentralReconnectsByIdentity(_ controllerArguments: [String]) async throws {
        let arguments = controllerArguments + ["--central", Self.identity.hexString, "--manual", "--pairing", "3:1:0"]
        try await withBumblePeer([.tcp], arguments: arguments) { peer in
            let log = PeerEventLog()
            let lines = peer.events
            let collector = Task { for await line in lines { log.append(line) } }
            defer { collector.cancel() }
            let (runner, protected) = try Self.privatePeripheral(peer.transports[0])

            // bumble sees a private address it cannot resolve yet, and connects to it. A rotation between
            // its scan and its connection leaves the attempt waiting for an address that is gone: it times
            // out and bumble scans again.
            var first: String?
            for _ in 0..<3 where first == nil {
                let seen = try #require(Self.scan(runner, peer, log, excluding: []))
                #expect(seen["resolvable"] as? Bool == true && seen["identity"] is NSNull, "\(seen)")
                let address = try #require(seen["advertisement"] as? String)
                #expect(address != Self.identity.hexString)
                let mark = log.all.count
                peer.send(line: #"{"central": 0, "op": "connect", "address": "\#(address)", "discover": false, "timeout": 1}"#)
                _ = runner.run(seconds: 10) { _ in
                    log.all.dropFirst(mark).contains { $0["connected"] != nil || $0["connect_timeout"] != nil }
                }
                if log.all.dropFirst(mark).contains(where: { $0["connected"] as? String == address }) { first = address }
            }
            let firstAddress = try #require(first)
            #expect(runner.run(seconds: 10) { !$0.engine.connectionHandles.isEmpty })

            // Pairing with bonding: the engine distributes its IRK and identity address, bumble stores them.
            peer.send(line: #"{"central": 0, "op": "pair"}"#)
            #expect(runner.run(seconds: 15) { runner in EngineSecurityBumbleTests.pairedEvent(runner) != nil && log.first("paired") != nil })
            let bond = try #require(EngineSecurityBumbleTests.pairedEvent(runner))
            #expect(bond.localKeys.identityResolvingKey == Self.irk)
            #expect(bond.localKeys.identityAddress == Self.identity.smpForm)
            let bumbleKeys = log.first("paired")?["paired"] as? [String: Any]
            #expect(bumbleKeys?["irk"] as? String == EngineSecurityBumbleTests.hex(Self.irk), "\(String(describing: bumbleKeys))")
            #expect(EngineSecurityBumbleTests.hex(bond.longTermKey) == bumbleKeys?["ltk"] as? String)

            peer.send(line: #"{"central": 0, "op": "disconnect"}"#)
            #expect(runner.run(seconds: 10) { runner in runner.engine.connectionHandles.isEmpty && runner.engine.isAdvertising })

            // After a rotation: bumble's scan sees a different private address, and its resolver (the IRK
            // from the bond) maps it to the engine's identity address.
            let rotated = try #require(Self.scan(runner, peer, log, excluding: [firstAddress]))
            #expect(rotated["resolvable"] as? Bool == true, "\(rotated)")
            #expect(rotated["identity"] as? String == Self.identity.hexString, "\(rotated)")
            #expect(rotated["advertisement"] as? String != Self.identity.hexString)

            // bumble connects by the identity address (it scans for a private address that resolves to it)
            // and encrypts with the stored LTK; the engine answers the LTK Request from its bond.
            let mark = runner.recorded.count
            let logMark = log.all.count
            let start = ContinuousClock.now
            peer.send(line: #"{"central": 0, "op": "connect_identity", "address": "\#(Self.identity.hexString)", "timeout": 1, "attempts": 5}"#)
            #expect(runner.run(seconds: 20) { _ in log.all.dropFirst(logMark).contains { $0["rpa"] != nil } })
            let connected = try #require(log.all.dropFirst(logMark).first { $0["rpa"] != nil })
            #expect(connected["connected"] as? String == Self.identity.hexString, "\(connected)")
            let reconnectedAddress = try #require(connected["rpa"] as? String)
            #expect(reconnectedAddress != firstAddress && reconnectedAddress != Self.identity.hexString)
            let reconnectedValue = try #require(BluetoothAddress(parsing: reconnectedAddress + "/random"))
            #expect(reconnectedValue.randomKind == .resolvablePrivate)
            #expect(runner.run(seconds: 10) { !$0.engine.connectionHandles.isEmpty })
            let second = try #require(runner.engine.connectionHandles.first)
            let connectedIn = ContinuousClock.now - start

            // Only events from now on: bumble's controller may give the new link the handle of the first
            // one, whose Encryption Change (from the pairing) is already in `events`.
            let eventMark = runner.events.count
            peer.send(line: #"{"central": 0, "op": "encrypt"}"#)
            #expect(runner.run(seconds: 10) { runner in
                runner.events.dropFirst(eventMark).contains(.encryptionChanged(connection: second, level: .encryptedUnauthenticated, keySize: 16))
            })
            #expect(runner.run(seconds: 5) { _ in log.all.filter { $0["encryption"] as? Int == 1 }.count == 2 })
            print("bumble central reconnected by identity (\(controllerArguments)): connected in \(connectedIn), encrypted in \(ContinuousClock.now - start), attempt \(connected["attempt"] ?? "?")")
            #expect(Self.pairings(runner) == 1)
            #expect(log.all.filter { $0["paired"] != nil }.count == 1)
            #expect(runner.engine.security(connection: second)?.level == .encryptedUnauthenticated)

            // The encrypted link reads what needs encryption (Vol 3 Part C §10.3.1).
            peer.send(line: #"{"central": 0, "op": "read", "handle": \#(protected.valueHandle)}"#)
            #expect(runner.run(seconds: 10) { _ in log.all.contains { $0["read"] as? Int == Int(protected.valueHandle) } })
            #expect(log.all.last { $0["read"] as? Int == Int(protected.valueHandle) }?["value"] as? String == "e10a")

            // The capture: the reconnection carried no SMP PDU, only the controller's LTK Request, the
            // engine's reply from its bond and Encryption Change (Vol 3 Part H §2.4.4).
            let reconnection = ReconnectionCapture(runner.btsnoop(from: mark))
            #expect(reconnection.smpPackets == 0, "\(reconnection)")
            #expect(reconnection.longTermKeyRequests == 1 && reconnection.longTermKeyReplies == 1, "\(reconnection)")
            #expect(reconnection.longTermKeyNegativeReplies == 0 && reconnection.encryptionChangedOn == 1, "\(reconnection)")
            #expect(reconnection.unreadable == 0)
        }
    }
}
