import BluewireCore
import BluewireHCI
import BluewireHostEngine
import BluewireSMP
import Foundation
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
