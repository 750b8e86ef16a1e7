import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import BluewireSMP
import Testing

/// Signed writes between two engines (Core Vol 3 Part C §10.4, Part G §4.9.2): after bonding with CSRKs
/// distributed both ways, on a new link that is not encrypted, the central's Signed Write Command is
/// written by the peripheral; the same command again (a replay), a tampered one and one from a peer
/// without a CSRK are dropped with the reason. bumble's GATT server has no Signed Write handler, so no
/// peer here can check these against another implementation; the signature itself is checked against
/// BlueZ's vectors (DataSigningTests).
@Suite("Host engine: signed writes")
struct EngineSignedWriteTests {
    static let centralCSRK: [UInt8] = (0..<16).map { UInt8(0x10 + $0) }
    static let peripheralCSRK: [UInt8] = (0..<16).map { UInt8(0x30 + $0) }

    static func written(_ events: [HostEngineEvent]) -> [[UInt8]] {
        events.compactMap { if case .server(.valueWritten(_, _, let value)) = $0 { return value }; return nil }
    }

    static func refusals(_ events: [HostEngineEvent]) -> [SignedWriteRefusal] {
        events.compactMap { if case .signedWriteRefused(_, _, let reason) = $0 { return reason }; return nil }
    }

    /// The ACL packets `driver` wrote and has not handed on, left in place.
    static func pendingACL(_ driver: EngineDriver) -> [HCIPacket] { driver.unread.filter { $0.type == .acl } }

    @Test("signed, written, counter stored; a replay, a tampered value and an encrypted link each handled as §10.4.2 and §4.9.2 say")
    func signedWrites() throws {
        var link = try LinkedEngines(
            central: PairingConfiguration(ioCapability: .noInputNoOutput, signatureKey: Self.centralCSRK),
            peripheral: PairingConfiguration(ioCapability: .noInputNoOutput, signatureKey: Self.peripheralCSRK))
        var builder = GATTDatabaseBuilder()
        try builder.addService(BluetoothUUID(0xFFF0))
        let target = try builder.addCharacteristic(
            BluetoothUUID(0xFFF1), properties: [.read, .authenticatedSignedWrites], permissions: [.read, .write], value: .cached([0]))
        link.peripheral.engine.setDatabase(builder.build())
        let pair = link.central.perform(.pair(connection: link.handle))
        link.pump()
        #expect(link.central.result(pair) == .success(.secured(.encryptedUnauthenticated)))
        #expect(link.central.engine.bonds.first?.peerKeys.signatureKey == Self.peripheralCSRK)
        #expect(link.peripheral.engine.bonds.first?.peerKeys.signatureKey == Self.centralCSRK)

        // A new link, not encrypted: the write is signed (opcode 0xD2) and written.
        link.disconnect()
        link.connect()
        // The handles are the bonded peer's, known from before (Core Vol 3 Part G §2.5.2): no discovery.
        let cached = link.central.perform(.gatt(connection: link.handle, .cachedDiscovery))
        #expect(link.central.result(cached) == .success(.done))
        let first = link.central.perform(.gatt(connection: link.handle, .signedWrite(handle: target.valueHandle, value: [1, 2, 3])))
        #expect(link.central.result(first) == .success(.done))
        let sent = try #require(Self.pendingACL(link.central).first)
        #expect(sent.payload.dropFirst(8).first == ATTOpcode.signedWriteCommand.rawValue)
        link.pump()
        #expect(Self.written(link.peripheral.takeEvents()) == [[1, 2, 3]])
        #expect(link.central.engine.bonds.first?.localSignCounter == 1)
        #expect(link.peripheral.engine.bonds.first?.peerSignCounter == 0)

        // The same command again: its counter is not new.
        link.peripheral.controller(sent)
        var events = link.peripheral.takeEvents()
        #expect(Self.written(events).isEmpty)
        #expect(Self.refusals(events) == [.replayedCounter(0)])

        // A value changed in flight: the signature no longer verifies.
        var tampered = Array(sent.payload)
        tampered[11] ^= 0xFF
        link.peripheral.controller(HCIPacket(type: .acl, payload: tampered[...]))
        events = link.peripheral.takeEvents()
        #expect(Self.written(events).isEmpty)
        #expect(Self.refusals(events) == [.badSignature])

        // The next signed write carries counter 1 and is written.
        _ = link.central.perform(.gatt(connection: link.handle, .signedWrite(handle: target.valueHandle, value: [4])))
        link.pump()
        #expect(Self.written(link.peripheral.takeEvents()) == [[4]])
        #expect(link.peripheral.engine.bonds.first?.peerSignCounter == 1)

        // Encrypted, the same request goes as a plain Write Command (0x52), as §4.9.2 requires.
        let encrypt = link.central.perform(.encrypt(connection: link.handle))
        link.pump()
        #expect(link.central.result(encrypt) == .success(.secured(.encryptedUnauthenticated)))
        _ = link.central.perform(.gatt(connection: link.handle, .signedWrite(handle: target.valueHandle, value: [5])))
        let plain = try #require(Self.pendingACL(link.central).first)
        #expect(plain.payload.dropFirst(8).first == ATTOpcode.writeCommand.rawValue)
        link.pump()
        #expect(Self.written(link.peripheral.takeEvents()) == [[5]])
        #expect(link.central.engine.bonds.first?.localSignCounter == 2, "no counter spent on an unsigned write")
    }

    @Test("without a bond there is no CSRK: the request fails and nothing is sent; the counters survive a bond file round trip")
    func noBondAndPersistence() throws {
        var link = try LinkedEngines(
            central: PairingConfiguration(ioCapability: .noInputNoOutput, signatureKey: Self.centralCSRK),
            peripheral: PairingConfiguration(ioCapability: .noInputNoOutput, signatureKey: Self.peripheralCSRK))
        link.central.perform(.gatt(connection: link.handle, .cachedDiscovery))
        let refused = link.central.perform(.gatt(connection: link.handle, .signedWrite(handle: 3, value: [1])))
        #expect(link.central.result(refused) == .failure(.security(.notBonded)))
        #expect(Self.pendingACL(link.central).isEmpty)

        var bond = HostBond(
            peer: LinkedEngines.peripheralAddress, secureConnections: true, authenticated: false, keySize: 16,
            longTermKey: Array(repeating: 7, count: 16), localKeys: DistributedKeys(), peerKeys: DistributedKeys())
        bond.localSignCounter = 41
        bond.peerSignCounter = 9
        let decoded = try BondFile.decode(BondFile.encode([bond]))
        #expect(decoded.first?.localSignCounter == 41 && decoded.first?.peerSignCounter == 9)
    }
}
