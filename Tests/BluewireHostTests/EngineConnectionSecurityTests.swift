import Bluewire
import BluewireTesting
import Testing

/// `EngineConnection`: the link as the application holds it, with its security level and key size,
/// `pair()` (the peripheral's sends a Security Request, Core Vol 3 Part H §3.6.7), `encrypt()` with a
/// bond, and `disconnect()`. Two EngineHosts with the real Security Manager on the virtual link.
@Suite("EngineConnection: pair, encrypt and the link's security", .timeLimit(.minutes(1)))
struct EngineConnectionSecurityTests {
    typealias Scene = EngineHostPairingTests.Scene

    /// The peripheral's view of the central's link, from its `.connected` event.
    static func peripheralLink(_ events: AsyncStream<HostEngineEvent>) async -> HostConnection? {
        for await event in events {
            if case .connected(let link) = event { return link }
        }
        return nil
    }

    @Test("peripheral pair() asks the central with a Security Request: both ends reach SC Numeric Comparison, 16 octets")
    func peripheralAsks() async throws {
        let scene = try await EngineHostPairingTests.scene(central: .displayYesNo, peripheral: .displayYesNo)
        let central = try #require(await scene.central.connectionHandles.first.map { handle in
            EngineConnection(host: scene.central, link: HostConnection(
                handle: handle, peer: EngineHostPairingTests.peripheralAddress, role: .central, interval: 0))
        })
        #expect(await central.securityLevel == .unencrypted)
        #expect(await central.keySize == 0)
        // The peripheral's link: its handle from the host. The central's connection completing says
        // nothing of when the peripheral's host takes its own LE Connection Complete: wait for it.
        try await scene.peripheral.until("the peripheral's link is up") { !$0.connectionHandles.isEmpty }
        let peripheralHandle = try #require(await scene.peripheral.connectionHandles.first)
        let peripheral = await scene.peripheral.connection(HostConnection(
            handle: peripheralHandle, peer: EngineHostPairingTests.centralAddress, role: .peripheral, interval: 0))

        let level = try await peripheral.pair()
        #expect(level == .secureConnectionsAuthenticated)
        #expect(await peripheral.keySize == 16)
        // The peripheral's pair() ends with its own Encryption Change; the central takes its own.
        try await scene.central.until("the central's side is encrypted") { [handle = central.handle] in $0.security(connection: handle)?.level == .secureConnectionsAuthenticated }
        #expect(await central.securityLevel == .secureConnectionsAuthenticated)
        #expect(await central.keySize == 16)
        #expect(await central.pairingMethod == .numericComparison)
        #expect(await scene.board.comparisons.count == 2)
        await EngineHostPairingTests.close(scene)
    }

    @Test("connect(to:) gives the link; after pair(), disconnect() and a new connect, encrypt() uses the bond and no one is asked")
    func connectPairReconnectEncrypt() async throws {
        let scene = try await EngineHostPairingTests.scene(central: .keyboardOnly, peripheral: .displayOnly)
        // The scene's first link goes; the API connects its own.
        _ = try await scene.central.perform(.disconnect(handle: scene.handle, reason: .remoteUserTerminatedConnection)).get()
        _ = try await scene.peripheral.perform(.startAdvertising(.named("Pairing"))).get()
        let peripheralEvents = await scene.peripheral.events()
        let first = try await scene.central.connect(to: EngineHostPairingTests.peripheralAddress)
        #expect(first.link.role == .central)
        #expect(first.link.peer.value == EngineHostPairingTests.peripheralAddress.value)
        let seen = try #require(await Self.peripheralLink(peripheralEvents))
        #expect(seen.role == .peripheral)

        #expect(try await first.pair() == .secureConnectionsAuthenticated)
        #expect(await first.pairingMethod == .passkeyEntry(.responderDisplays))
        // The central's pair() ends with its own Encryption Change; the peripheral takes its own.
        try await scene.peripheral.until("the peripheral's side is encrypted") { $0.security(connection: seen.handle)?.level == .secureConnectionsAuthenticated }
        let shown = await scene.board.shown
        #expect(shown != nil)

        #expect(try await first.disconnect() == .connectionTerminatedByLocalHost)
        #expect(await first.securityLevel == .unencrypted, "a link that is gone has no security")
        do {
            _ = try await first.encrypt()
            Issue.record("encrypted a link that is gone")
        } catch {
            #expect(error == .unknownConnection(first.handle))
        }

        _ = try await scene.peripheral.perform(.startAdvertising(.named("Pairing"))).get()
        let second = try await scene.central.connect(to: EngineHostPairingTests.peripheralAddress)
        #expect(try await second.encrypt() == .secureConnectionsAuthenticated)
        #expect(await second.keySize == 16)
        #expect(await second.pairingMethod == nil, "encrypted with the bond: no pairing ran")
        #expect(await scene.board.shown == shown, "nobody was shown a new passkey")
        await EngineHostPairingTests.close(scene)
    }
}
