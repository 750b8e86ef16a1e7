import BluewireCore
import BluewireCrypto
import BluewireHCI
import BluewireHostEngine
import BluewireSMP
import Foundation
import HostTestSupport
import PeerTestSupport
import Testing

/// The engine's Security Manager against bumble's (Tests/Peers/bumble_pairing.py) over a bumble controller
/// link: real LE Enable Encryption / LTK Request / Encryption Change from bumble's link-layer emulation.
@Suite("Host engine pairing with bumble", .serialized)
struct EngineSecurityBumbleTests {
    static func engineSecurity(_ pairing: PairingConfiguration) -> HostSecurityConfiguration {
        HostSecurityConfiguration(pairing: pairing, crypto: SMPCrypto(SwiftCryptoSMP()))
    }

    static func hex(_ bytes: [UInt8]?) -> String? { bytes.map { $0.map { String(format: "%02x", $0) }.joined() } }

    /// Brings the engine up as a central and connects to the bumble peripheral; returns the link handle.
    static func connectedCentral(_ peer: BumblePeer, address: BluetoothAddress, pairing: PairingConfiguration)
        throws -> (SocketEngineRunner, UInt16, BluetoothAddress)
    {
        let peripheral = try #require(peer.ready.device.flatMap { BluetoothAddress(parsing: $0.address + "/random") })
        let runner = try SocketEngineRunner(
            transport: peer.transports[0], configuration: HostEngineConfiguration(randomAddress: address))
        runner.engine.configureSecurity(engineSecurity(pairing))
        runner.perform(.start, id: 1)
        #expect(runner.run(seconds: 10) { $0.result(1) != nil })
        let handle = try connect(runner, to: peripheral, id: 2)
        return (runner, handle, peripheral)
    }

    static func connect(_ runner: SocketEngineRunner, to peripheral: BluetoothAddress, id: UInt32) throws -> UInt16 {
        runner.perform(.connect(peripheral, LEConnectionParameters()), id: id)
        #expect(runner.run(seconds: 15) { $0.result(id) != nil })
        guard case .success(.connected(let connection))? = runner.result(id) else {
            Issue.record("connect: \(String(describing: runner.result(id)))")
            throw EngineTestError.bringUpFailed
        }
        return connection.handle
    }

    static func pairedEvent(_ runner: SocketEngineRunner) -> HostBond? {
        for case .paired(_, let keys, _, _) in runner.events.reversed() { return keys }
        return nil
    }

    @Test("engine central, SC Just Works with a bumble peripheral; then re-encryption with the bonded LTK on a second connection")
    func centralJustWorksThenReencrypts() async throws {
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--name", "bumble-smp", "--interval", "50", "--pairing", "3:1:0"]) { peer in
            let log = PeerEventLog()
            let lines = peer.events
            let collector = Task { for await line in lines { log.append(line) } }
            defer { collector.cancel() }
            let (runner, handle, peripheral) = try Self.connectedCentral(
                peer, address: BluetoothAddress(value: 0xC3_5E_17_00_E5_01, type: .random),
                pairing: PairingConfiguration(ioCapability: .noInputNoOutput))

            let start = ContinuousClock.now
            runner.perform(.pair(connection: handle), id: 3)
            #expect(runner.run(seconds: 15) { $0.result(3) != nil && log.first("paired") != nil })
            print("engine central SC Just Works with bumble: paired in \(ContinuousClock.now - start)")
            #expect(runner.result(3) == .success(.secured(.encryptedUnauthenticated)))
            #expect(runner.events.contains(.encryptionChanged(connection: handle, level: .encryptedUnauthenticated, keySize: 16)))
            let keys = try #require(Self.pairedEvent(runner))
            let bumbleKeys = log.first("paired")?["paired"] as? [String: Any]
            #expect(keys.longTermKey?.count == 16)
            #expect(Self.hex(keys.longTermKey) == bumbleKeys?["ltk"] as? String, "bumble: \(String(describing: bumbleKeys))")
            // bumble distributed its IRK and identity address (Identity Information, §3.6.4-5).
            #expect(keys.peerKeys.identityResolvingKey?.count == 16 && keys.peerKeys.identityAddress != nil)
            #expect(log.first("encryption")?["encryption"] as? Int == 1)
            #expect(runner.engine.bonds.map(\.peer) == [peripheral])

            // Second connection: encrypted with the stored LTK, no pairing (Core Vol 3 Part H §2.4.4).
            runner.perform(.disconnect(handle: handle, reason: .remoteUserTerminatedConnection), id: 4)
            #expect(runner.run(seconds: 10) { $0.result(4) != nil })
            let pairingsBefore = runner.events.filter { if case .paired = $0 { return true }; return false }.count
            let mark = runner.recorded.count
            let second = try Self.connect(runner, to: peripheral, id: 5)
            runner.perform(.encrypt(connection: second), id: 6)
            #expect(runner.run(seconds: 10) { $0.result(6) != nil })
            #expect(runner.result(6) == .success(.secured(.encryptedUnauthenticated)))
            #expect(runner.events.contains(.encryptionChanged(connection: second, level: .encryptedUnauthenticated, keySize: 16)))
            #expect(runner.events.filter { if case .paired = $0 { return true }; return false }.count == pairingsBefore)
            #expect(runner.run(seconds: 5) { _ in log.all.filter { $0["encryption"] as? Int == 1 }.count == 2 })
            #expect(log.all.filter { $0["paired"] != nil }.count == 1)

            // The capture says the same: the first connection carried SMP, the reconnection none, only the
            // link-layer encryption with the stored key (§2.4.4).
            let pairing = ReconnectionCapture(runner.btsnoop(to: mark))
            let reconnection = ReconnectionCapture(runner.btsnoop(from: mark))
            #expect(pairing.smpPackets >= 6 && pairing.unreadable == 0, "\(pairing)")
            #expect(reconnection.smpPackets == 0, "\(reconnection)")
            #expect(reconnection.enableEncryption == 1 && reconnection.encryptionChangedOn == 1, "\(reconnection)")
            #expect(reconnection.unreadable == 0)
        }
    }

    @Test("engine central, SC Passkey Entry: the bumble peripheral displays, the engine's user types it")
    func centralPasskeyEntry() async throws {
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--name", "bumble-smp", "--interval", "50", "--pairing", "0:1:1"]) { peer in
            let log = PeerEventLog()
            let lines = peer.events
            let collector = Task { for await line in lines { log.append(line) } }
            defer { collector.cancel() }
            let (runner, handle, _) = try Self.connectedCentral(
                peer, address: BluetoothAddress(value: 0xC3_5E_17_00_E5_02, type: .random),
                pairing: PairingConfiguration(ioCapability: .keyboardOnly, mitmRequired: true))

            runner.perform(.pair(connection: handle), id: 3)
            #expect(runner.run(seconds: 10) { runner in
                log.first("passkey") != nil && runner.events.contains(.passkeyRequest(connection: handle))
            })
            let shown = try #require(log.first("passkey")?["passkey"] as? Int)
            runner.perform(.passkeyReply(connection: handle, passkey: UInt32(shown)), id: 4)
            #expect(runner.run(seconds: 15) { $0.result(3) != nil && log.first("paired") != nil })
            #expect(runner.result(3) == .success(.secured(.secureConnectionsAuthenticated)))
            #expect(runner.events.contains(
                .encryptionChanged(connection: handle, level: .secureConnectionsAuthenticated, keySize: 16)))
            let keys = try #require(Self.pairedEvent(runner))
            #expect(keys.authenticated && keys.longTermKey?.count == 16)
            #expect(Self.hex(keys.longTermKey) == (log.first("paired")?["paired"] as? [String: Any])?["ltk"] as? String)
        }
    }

    @Test("engine peripheral paired by a bumble central (SC Just Works), keys distributed both ways")
    func peripheralPairedByBumble() async throws {
        let address = BluetoothAddress(value: 0xC3_5E_17_00_E5_03, type: .random)
        try await withBumblePeer([.tcp], arguments: ["--central", address.hexString, "--manual", "--pairing", "3:1:0"]) { peer in
            let log = PeerEventLog()
            let lines = peer.events
            let collector = Task { for await line in lines { log.append(line) } }
            defer { collector.cancel() }
            let irk: [UInt8] = (0..<16).map { UInt8(0x40 + $0) }
            let runner = try SocketEngineRunner(
                transport: peer.transports[0], configuration: HostEngineConfiguration(randomAddress: address))
            runner.engine.configureSecurity(Self.engineSecurity(PairingConfiguration(
                ioCapability: .noInputNoOutput, identityResolvingKey: irk, identityAddress: address.smpForm)))
            runner.perform(.start, id: 1)
            #expect(runner.run(seconds: 10) { $0.result(1) != nil })
            runner.perform(.startAdvertising(.named("engine-smp")), id: 2)
            #expect(runner.run(seconds: 10) { $0.result(2) != nil })

            peer.send(line: #"{"central": 0, "op": "connect", "discover": false}"#)
            #expect(runner.run(seconds: 15) { _ in log.first("connected") != nil })
            peer.send(line: #"{"central": 0, "op": "pair"}"#)
            #expect(runner.run(seconds: 15) { runner in Self.pairedEvent(runner) != nil && log.first("paired") != nil })
            let handle = try #require(runner.engine.connectionHandles.first)
            #expect(runner.events.contains(.encryptionChanged(connection: handle, level: .encryptedUnauthenticated, keySize: 16)))
            let keys = try #require(Self.pairedEvent(runner))
            let bumbleKeys = log.first("paired")?["paired"] as? [String: Any]
            #expect(keys.longTermKey?.count == 16)
            #expect(Self.hex(keys.longTermKey) == bumbleKeys?["ltk"] as? String, "bumble: \(String(describing: bumbleKeys))")
            // The engine's IRK reached bumble (Identity Information, §3.6.4).
            #expect(bumbleKeys?["irk"] as? String == Self.hex(irk))
            #expect(log.first("encryption")?["encryption"] as? Int == 1)
            #expect(runner.engine.security(connection: handle)?.level == .encryptedUnauthenticated)

            // bumble reconnects and encrypts with its stored LTK: the engine answers the LTK Request from its
            // bond store (EDIV and Rand zero under LE SC, §2.4.4), no pairing.
            peer.send(line: #"{"central": 0, "op": "disconnect"}"#)
            #expect(runner.run(seconds: 10) { runner in runner.engine.connectionHandles.isEmpty && runner.engine.isAdvertising })
            let mark = runner.recorded.count
            peer.send(line: #"{"central": 0, "op": "connect", "discover": false}"#)
            #expect(runner.run(seconds: 15) { runner in !runner.engine.connectionHandles.isEmpty })
            let second = try #require(runner.engine.connectionHandles.first)
            peer.send(line: #"{"central": 0, "op": "encrypt"}"#)
            #expect(runner.run(seconds: 10) { runner in
                runner.events.contains(.encryptionChanged(connection: second, level: .encryptedUnauthenticated, keySize: 16))
            })
            #expect(runner.run(seconds: 5) { _ in log.all.filter { $0["encryption"] as? Int == 1 }.count == 2 })
            #expect(runner.events.filter { if case .paired = $0 { return true }; return false }.count == 1)

            // In the capture: SMP on the first connection; on the reconnection the controller's LTK Request,
            // the engine's reply from its bond store, Encryption Change, and no SMP PDU either way (§2.4.4).
            let pairing = ReconnectionCapture(runner.btsnoop(to: mark))
            let reconnection = ReconnectionCapture(runner.btsnoop(from: mark))
            #expect(pairing.smpPackets >= 6 && pairing.unreadable == 0, "\(pairing)")
            #expect(reconnection.smpPackets == 0, "\(reconnection)")
            #expect(reconnection.longTermKeyRequests == 1 && reconnection.longTermKeyReplies == 1, "\(reconnection)")
            #expect(reconnection.longTermKeyNegativeReplies == 0 && reconnection.encryptionChangedOn == 1, "\(reconnection)")
            #expect(reconnection.unreadable == 0)
        }
    }
}

extension EngineSecurityBumbleTests {
    @Test("engine central, legacy Just Works with a bumble peripheral: STK, its LTK/EDIV/Rand, re-encryption with them")
    func centralLegacyBond() async throws {
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--name", "bumble-smp", "--interval", "50", "--pairing", "3:0:0"]) { peer in
            let log = PeerEventLog()
            let lines = peer.events
            let collector = Task { for await line in lines { log.append(line) } }
            defer { collector.cancel() }
            let (runner, handle, peripheral) = try Self.connectedCentral(
                peer, address: BluetoothAddress(value: 0xC3_5E_17_00_E5_05, type: .random),
                pairing: PairingConfiguration(ioCapability: .noInputNoOutput, secureConnections: false))
            runner.perform(.pair(connection: handle), id: 3)
            #expect(runner.run(seconds: 15) { $0.result(3) != nil && log.first("paired") != nil })
            #expect(runner.result(3) == .success(.secured(.encryptedUnauthenticated)))
            let keys = try #require(Self.pairedEvent(runner))
            let bumbleKeys = log.first("paired")?["paired"] as? [String: Any]
            // Legacy: no derived LTK; the peripheral distributes one (§3.6.1). bumble, the pairing responder,
            // files its own under "ltk_central" and the engine's under "ltk_peripheral".
            #expect(keys.longTermKey == nil && keys.peerKeys.longTermKey?.count == 16 && keys.peerKeys.rand?.count == 8)
            #expect(Self.hex(keys.peerKeys.longTermKey) == bumbleKeys?["ltk_central"] as? String, "bumble: \(String(describing: bumbleKeys))")
            #expect(Self.hex(keys.localKeys.longTermKey) == bumbleKeys?["ltk_peripheral"] as? String)

            runner.perform(.disconnect(handle: handle, reason: .remoteUserTerminatedConnection), id: 4)
            #expect(runner.run(seconds: 10) { $0.result(4) != nil })
            let second = try Self.connect(runner, to: peripheral, id: 5)
            runner.perform(.encrypt(connection: second), id: 6)
            #expect(runner.run(seconds: 10) { $0.result(6) != nil })
            #expect(runner.result(6) == .success(.secured(.encryptedUnauthenticated)))
            #expect(runner.run(seconds: 5) { _ in log.all.filter { $0["encryption"] as? Int == 1 }.count == 2 })
        }
    }

    @Test("engine peripheral asks a bumble central to pair with a Security Request (§3.6.7)")
    func peripheralSecurityRequest() async throws {
        let address = BluetoothAddress(value: 0xC3_5E_17_00_E5_04, type: .random)
        try await withBumblePeer([.tcp], arguments: ["--central", address.hexString, "--manual", "--pairing", "3:1:0"]) { peer in
            let log = PeerEventLog()
            let lines = peer.events
            let collector = Task { for await line in lines { log.append(line) } }
            defer { collector.cancel() }
            let runner = try SocketEngineRunner(
                transport: peer.transports[0], configuration: HostEngineConfiguration(randomAddress: address))
            runner.engine.configureSecurity(Self.engineSecurity(PairingConfiguration(ioCapability: .noInputNoOutput)))
            runner.perform(.start, id: 1)
            #expect(runner.run(seconds: 10) { $0.result(1) != nil })
            runner.perform(.startAdvertising(.named("engine-smp")), id: 2)
            #expect(runner.run(seconds: 10) { $0.result(2) != nil })
            peer.send(line: #"{"central": 0, "op": "connect", "discover": false}"#)
            #expect(runner.run(seconds: 15) { runner in !runner.engine.connectionHandles.isEmpty })
            let handle = try #require(runner.engine.connectionHandles.first)

            runner.perform(.pair(connection: handle), id: 3)
            #expect(runner.run(seconds: 15) { $0.result(3) != nil })
            #expect(runner.result(3) == .success(.secured(.encryptedUnauthenticated)))
            // AuthReq: bonding 0b01 and SC (§3.5.1).
            #expect(log.first("security_request")?["security_request"] as? Int == 0x09)
            #expect(runner.run(seconds: 5) { _ in log.first("paired") != nil })
            #expect(Self.hex(Self.pairedEvent(runner)?.longTermKey) == (log.first("paired")?["paired"] as? [String: Any])?["ltk"] as? String)
        }
    }
}
