import BluewireCore
import BluewireCrypto
import BluewireHCI
import BluewireHostEngine
import BluewireSMP
import Foundation
import HostTestSupport
import PeerTestSupport
import Testing

/// A bumble peripheral with privacy on (it advertises from a resolvable private address made with its IRK,
/// Core Vol 6 Part B §1.3.2.2): after bonding, the engine shows it by its identity address, and after it
/// changed its private address the engine still knows it (the bond's IRK resolves the new one, Core Vol 3
/// Part C §10.8.2.3) and connects to it by identity address, encrypting with the bond without pairing.
@Suite("Host engine: a bonded peer's resolvable private addresses, against bumble", .serialized)
struct EnginePrivacyBumbleTests {
    /// Scans until a report of `name` from an address other than `excluding`; returns that device.
    static func scan(_ runner: SocketEngineRunner, name: String, excluding: BluetoothAddress?, id: UInt32) -> DiscoveredDevice? {
        let before = runner.events.count
        runner.perform(.startScan(ScanParameters(), filter: AdvertisingFilter(namePrefix: name)), id: id)
        var found: DiscoveredDevice?
        _ = runner.run(seconds: 15) { runner in
            for case .deviceFound(let device) in runner.events.dropFirst(before) where device.address != excluding {
                found = device
                return true
            }
            return false
        }
        runner.perform(.stopScan, id: id + 1)
        _ = runner.run(seconds: 5) { $0.result(id + 1) != nil }
        return found
    }

    @Test("bonded over a private address; the new private address resolves to the identity, and connecting by identity reaches it")
    func resolvesRotatedAddress() async throws {
        let arguments = ["--peripheral", "--name", "bumble-rpa", "--interval", "50", "--privacy", "--pairing", "3:1:0"]
        try await withBumblePeer([.tcp], arguments: arguments) { peer in
            let log = PeerEventLog()
            let lines = peer.events
            let collector = Task { for await line in lines { log.append(line) } }
            defer { collector.cancel() }
            let identity = try #require(peer.ready.device.flatMap { BluetoothAddress(parsing: $0.address + "/random") })
            let runner = try SocketEngineRunner(
                transport: peer.transports[0],
                configuration: HostEngineConfiguration(randomAddress: BluetoothAddress(value: 0xC3_5E_17_00_E8_01, type: .random)))
            runner.engine.configureSecurity(EngineSecurityBumbleTests.engineSecurity(PairingConfiguration(ioCapability: .noInputNoOutput)))
            runner.perform(.start, id: 1)
            #expect(runner.run(seconds: 10) { $0.result(1) != nil })

            // Before bonding: a private address and nothing it resolves to.
            let first = try #require(Self.scan(runner, name: "bumble-rpa", excluding: nil, id: 2))
            #expect(first.address.randomKind == .resolvablePrivate && first.address != identity)
            #expect(first.identityAddress == nil)
            #expect(log.first("rpa")?["rpa"] as? String == first.address.hexString)

            let handle = try EngineSecurityBumbleTests.connect(runner, to: first.address, id: 4)
            runner.perform(.pair(connection: handle), id: 5)
            #expect(runner.run(seconds: 15) { $0.result(5) != nil })
            #expect(runner.result(5) == .success(.secured(.encryptedUnauthenticated)))
            let bond = try #require(EngineSecurityBumbleTests.pairedEvent(runner))
            #expect(bond.peerKeys.identityAddress == identity.smpForm, "bumble's Identity Address Information (§3.6.5)")
            #expect(bond.peerKeys.identityResolvingKey?.count == 16)
            runner.perform(.disconnect(handle: handle, reason: .remoteUserTerminatedConnection), id: 6)
            #expect(runner.run(seconds: 10) { $0.result(6) != nil })

            // bumble takes a new private address: a stranger's to anyone without its IRK.
            peer.send(line: #"{"op": "rotate"}"#)
            #expect(runner.run(seconds: 10) { _ in log.all.filter { $0["rpa"] != nil }.count == 2 })
            let rotated = try #require(log.all.last { $0["rpa"] != nil }?["rpa"] as? String)
            #expect(rotated != first.address.hexString)
            let second = try #require(Self.scan(runner, name: "bumble-rpa", excluding: first.address, id: 7))
            #expect(second.address.hexString == rotated)
            #expect(second.address.randomKind == .resolvablePrivate)
            #expect(second.identityAddress == identity)

            // Connecting by the identity address reaches the new private address; the bond encrypts the link.
            let pairingsBefore = runner.events.filter { if case .paired = $0 { return true }; return false }.count
            runner.perform(.connect(identity, LEConnectionParameters()), id: 9)
            #expect(runner.run(seconds: 15) { $0.result(9) != nil })
            guard case .success(.connected(let connection))? = runner.result(9) else {
                Issue.record("connect by identity: \(String(describing: runner.result(9)))")
                return
            }
            #expect(connection.peer == second.address)
            #expect(connection.identityAddress == identity)
            runner.perform(.encrypt(connection: connection.handle), id: 10)
            #expect(runner.run(seconds: 10) { $0.result(10) != nil })
            #expect(runner.result(10) == .success(.secured(.encryptedUnauthenticated)))
            #expect(runner.events.filter { if case .paired = $0 { return true }; return false }.count == pairingsBefore)
            #expect(runner.run(seconds: 5) { _ in log.all.filter { $0["encryption"] as? Int == 1 }.count == 2 })
        }
    }
}

extension EnginePrivacyBumbleTests {
    /// Runs both engines' I/O loops in turn until `condition` holds or `seconds` pass.
    static func run(_ a: SocketEngineRunner, _ b: SocketEngineRunner, seconds: Double, until condition: () -> Bool) -> Bool {
        let limit = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while ContinuousClock.now < limit {
            if condition() { return true }
            _ = a.run(seconds: 0.005) { _ in false }
            _ = b.run(seconds: 0.005) { _ in false }
        }
        return condition()
    }

    @Test("an engine advertising with privacy: a new private address after each rotation, paired over one, resolved and reconnected by a bonded engine",
          arguments: [[], ["--legacy-reports"]])
    func localPrivacyRotates(_ controllerArguments: [String]) async throws {
        try await withBumblePeer([.tcp, .tcp], arguments: controllerArguments) { peer in
            let identity = BluetoothAddress(value: 0xC3_5E_17_00_E9_01, type: .random)
            let irk: [UInt8] = (0..<16).map { UInt8(0xA0 + $0) }
            let peripheral = try SocketEngineRunner(
                transport: peer.transports[0], configuration: HostEngineConfiguration(randomAddress: identity))
            peripheral.engine.configureSecurity(HostSecurityConfiguration(
                pairing: PairingConfiguration(ioCapability: .noInputNoOutput, identityResolvingKey: irk, identityAddress: identity.smpForm),
                crypto: SMPCrypto(SwiftCryptoSMP()), privacy: PrivacyConfiguration(rotationInterval: .milliseconds(1500))))
            let central = try SocketEngineRunner(
                transport: peer.transports[1],
                configuration: HostEngineConfiguration(randomAddress: BluetoothAddress(value: 0xC3_5E_17_00_E9_02, type: .random)))
            central.engine.configureSecurity(EngineSecurityBumbleTests.engineSecurity(PairingConfiguration(ioCapability: .noInputNoOutput)))
            peripheral.perform(.start, id: 1)
            central.perform(.start, id: 1)
            #expect(Self.run(peripheral, central, seconds: 10) { peripheral.result(1) != nil && central.result(1) != nil })
            peripheral.perform(.startAdvertising(.named("engine-private")), id: 2)
            #expect(Self.run(peripheral, central, seconds: 10) { peripheral.result(2) != nil })

            func scan(excluding: [BluetoothAddress], id: UInt32) -> DiscoveredDevice? {
                let before = central.events.count
                central.perform(.startScan(ScanParameters(), filter: AdvertisingFilter(namePrefix: "engine-private")), id: id)
                var found: DiscoveredDevice?
                _ = Self.run(peripheral, central, seconds: 15) {
                    for case .deviceFound(let device) in central.events.dropFirst(before) where !excluding.contains(device.address) {
                        found = device
                        return true
                    }
                    return false
                }
                central.perform(.stopScan, id: id + 1)
                _ = Self.run(peripheral, central, seconds: 5) { central.result(id + 1) != nil }
                return found
            }

            // A private address, and after the rotation another one; neither is the identity.
            let first = try #require(scan(excluding: [], id: 3))
            #expect(first.address.randomKind == .resolvablePrivate && first.address != identity)
            let second = try #require(scan(excluding: [first.address], id: 5))
            #expect(second.address.randomKind == .resolvablePrivate && second.address != identity)
            #expect(second.identityAddress == nil, "no bond yet: nothing resolves it")

            // Pairing over a private address: both sides' f5/f6 take the address on the link.
            central.perform(.connect(second.address, LEConnectionParameters()), id: 7)
            #expect(Self.run(peripheral, central, seconds: 15) { central.result(7) != nil })
            guard case .success(.connected(let link))? = central.result(7) else {
                Issue.record("connect: \(String(describing: central.result(7)))")
                return
            }
            central.perform(.pair(connection: link.handle), id: 8)
            #expect(Self.run(peripheral, central, seconds: 15) { central.result(8) != nil })
            #expect(central.result(8) == .success(.secured(.encryptedUnauthenticated)))
            let bond = try #require(EngineSecurityBumbleTests.pairedEvent(central))
            #expect(bond.peerKeys.identityResolvingKey == irk && bond.peerKeys.identityAddress == identity.smpForm)
            central.perform(.disconnect(handle: link.handle, reason: .remoteUserTerminatedConnection), id: 9)
            #expect(Self.run(peripheral, central, seconds: 10) { central.result(9) != nil })

            // Advertising again, from a newer private address that the bond resolves.
            let third = try #require(scan(excluding: [first.address, second.address], id: 10))
            #expect(third.address.randomKind == .resolvablePrivate)
            #expect(third.identityAddress == identity)
            central.perform(.connect(identity, LEConnectionParameters()), id: 12)
            #expect(Self.run(peripheral, central, seconds: 15) { central.result(12) != nil })
            guard case .success(.connected(let again))? = central.result(12) else {
                Issue.record("connect by identity: \(String(describing: central.result(12)))")
                return
            }
            #expect(again.identityAddress == identity && again.peer.randomKind == .resolvablePrivate)
            central.perform(.encrypt(connection: again.handle), id: 13)
            #expect(Self.run(peripheral, central, seconds: 10) { central.result(13) != nil })
            #expect(central.result(13) == .success(.secured(.encryptedUnauthenticated)))
            #expect(central.events.filter { if case .paired = $0 { return true }; return false }.count == 1)
        }
    }
}
