import Bluewire
import BluewireTesting
import Testing

/// `EngineHost`'s pairing API: `pair(_:)`/`encrypt(_:)` with typed errors, `security(of:)`, and a
/// `PairingDelegate` answering the engine's prompts on both sides. Two EngineHosts, each with the real
/// Security Manager on swift-crypto, on the virtual link (`VirtualTransport`); nothing is scripted.
@Suite("EngineHost: pairing with a delegate", .timeLimit(.minutes(1)))
struct EngineHostPairingTests {
    static let centralAddress = BluetoothAddress.randomStatic(0x0A0B_0C0D_0F01)
    static let peripheralAddress = BluetoothAddress.randomStatic(0x0A0B_0C0D_0F02)

    /// What one side's user saw and typed: the passkey displayed is what the other side's user types.
    actor Board {
        var shown: UInt32?
        var comparisons: [UInt32] = []
        var waiting: [CheckedContinuation<UInt32, Never>] = []

        func show(_ passkey: UInt32) {
            shown = passkey
            for waiter in waiting { waiter.resume(returning: passkey) }
            waiting.removeAll()
        }

        func read() async -> UInt32 {
            if let shown { return shown }
            return await withCheckedContinuation { waiting.append($0) }
        }

        func compared(_ value: UInt32) { comparisons.append(value) }
    }

    /// A user who types what the board shows, and answers comparisons with `accepts` (noting the value).
    struct User: PairingDelegate {
        let board: Board
        let accepts: Bool
        func displayPasskey(_ passkey: UInt32, connection: UInt16) async { await board.show(passkey) }
        func enterPasskey(connection: UInt16) async -> UInt32? { await board.read() }
        func confirm(_ value: UInt32, connection: UInt16) async -> Bool {
            await board.compared(value)
            return accepts
        }
    }

    struct Scene {
        let central: EngineHost
        let peripheral: EngineHost
        let handle: UInt16
        let board: Board
    }

    static func scene(central centralIO: IOCapability, peripheral peripheralIO: IOCapability,
                      centralAccepts: Bool = true, peripheralAccepts: Bool = true) async throws -> Scene {
        let clock = TestClock()
        let link = VirtualLink(clock: clock, timing: .immediate)
        let central = EngineHost(
            transport: VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.centralPublic)),
            configuration: HostEngineConfiguration(randomAddress: centralAddress), clock: clock)
        let peripheral = EngineHost(
            transport: VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.peripheralPublic)),
            configuration: HostEngineConfiguration(randomAddress: peripheralAddress), clock: clock)
        let crypto = SMPCrypto(SwiftCryptoSMP())
        await central.configureSecurity(HostSecurityConfiguration(
            pairing: PairingConfiguration(ioCapability: centralIO, mitmRequired: true), crypto: crypto))
        await peripheral.configureSecurity(HostSecurityConfiguration(
            pairing: PairingConfiguration(ioCapability: peripheralIO), crypto: crypto))
        let board = Board()
        await central.setPairingDelegate(User(board: board, accepts: centralAccepts))
        await peripheral.setPairingDelegate(User(board: board, accepts: peripheralAccepts))
        _ = try await central.perform(.start).get()
        _ = try await peripheral.perform(.start).get()
        _ = try await peripheral.perform(.startAdvertising(.named("Pairing"))).get()
        guard case .connected(let link) = try await central.perform(.connect(peripheralAddress, LEConnectionParameters())).get() else {
            throw EngineLinkError.connectionFailed
        }
        return Scene(central: central, peripheral: peripheral, handle: link.handle, board: board)
    }

    static func close(_ scene: Scene) async {
        await scene.central.close()
        await scene.peripheral.close()
    }

    @Test("Numeric Comparison: both delegates see the same value and accept; the link is SC authenticated, 16-octet key")
    func numericComparison() async throws {
        let scene = try await Self.scene(central: .displayYesNo, peripheral: .displayYesNo)
        #expect(await scene.central.security(of: scene.handle)?.level == .unencrypted)
        let level = try await scene.central.pair(scene.handle)
        #expect(level == .secureConnectionsAuthenticated)
        let security = await scene.central.security(of: scene.handle)
        #expect(security?.level == .secureConnectionsAuthenticated)
        #expect(security?.keySize == 16)
        let comparisons = await scene.board.comparisons
        #expect(comparisons.count == 2)
        #expect(Set(comparisons).count == 1, "both users were shown the same six digits: \(comparisons)")
        #expect(await scene.central.bonds.map(\.peer.value) == [Self.peripheralAddress.value])
        await Self.close(scene)
    }

    @Test("Passkey Entry: the peripheral's delegate displays, the central's types it; then encrypt() re-encrypts with the bond")
    func passkeyEntry() async throws {
        let scene = try await Self.scene(central: .keyboardOnly, peripheral: .displayOnly)
        let level = try await scene.central.pair(scene.handle)
        #expect(level == .secureConnectionsAuthenticated)
        #expect(await scene.board.shown != nil)
        // The peripheral's host finishes its side on its own executor, after the central's pair()
        // returned: wait (bounded) for its own LE Connection Complete and Encryption Change.
        try await scene.peripheral.until("the peripheral's link is up") { !$0.connectionHandles.isEmpty }
        let peripheralHandle = try #require(await scene.peripheral.connectionHandles.first)
        try await scene.peripheral.until("the peripheral's side is encrypted") { $0.security(connection: peripheralHandle)?.level == .secureConnectionsAuthenticated }
        #expect(await scene.peripheral.security(of: peripheralHandle)?.level == .secureConnectionsAuthenticated)

        // A new link: the bond's key encrypts it, nobody is asked anything.
        _ = try await scene.central.perform(.disconnect(handle: scene.handle, reason: .remoteUserTerminatedConnection)).get()
        guard case .connected(let again) = try await scene.central.perform(.connect(Self.peripheralAddress, LEConnectionParameters())).get() else {
            Issue.record("no second connection")
            return
        }
        let shownBefore = await scene.board.shown
        #expect(try await scene.central.encrypt(again.handle) == .secureConnectionsAuthenticated)
        #expect(await scene.board.shown == shownBefore)
        await Self.close(scene)
    }

    @Test("a comparison the peripheral's user rejects: pair(_:) throws Numeric Comparison Failed by name, the link stays unencrypted")
    func rejectedComparison() async throws {
        let scene = try await Self.scene(central: .displayYesNo, peripheral: .displayYesNo, peripheralAccepts: false)
        do {
            _ = try await scene.central.pair(scene.handle)
            Issue.record("pairing succeeded although the comparison was rejected")
        } catch {
            #expect(error == .security(.pairingFailed(.remote(.numericComparisonFailed))))
        }
        #expect(await scene.central.security(of: scene.handle)?.level == .unencrypted)
        #expect(await scene.central.bonds.isEmpty)
        await Self.close(scene)
    }

    @Test("encrypt(_:) without a bond: .security(.notBonded), nothing changes")
    func encryptWithoutBond() async throws {
        let scene = try await Self.scene(central: .noInputNoOutput, peripheral: .noInputNoOutput)
        do {
            _ = try await scene.central.encrypt(scene.handle)
            Issue.record("encrypted without a bond")
        } catch {
            #expect(error == .security(.notBonded))
        }
        #expect(await scene.central.security(of: scene.handle)?.level == .unencrypted)
        await Self.close(scene)
    }
}
