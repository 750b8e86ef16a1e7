import BluewireCore
import BluewireCrypto
import BluewireHCI
import BluewireHostEngine
import BluewireSMP
import BluewireTesting
import Testing

/// Pairing with the controller's crypto (`SMPCrypto.controller`): the engine sends LE Rand, LE Read Local
/// P-256 Public Key, LE Generate DHKey and LE Encrypt to its `VirtualController`, which computes them with
/// swift-crypto, and takes each answer as an input of the pairing. The other side pairs with swift-crypto
/// in its host, so the keys both derive must agree for the link to encrypt.
@Suite struct ControllerCryptoPairingTests {
    static func scene(
        central: PairingConfiguration, peripheral: PairingConfiguration, centralCrypto: SMPCrypto = SMPCrypto(SwiftCryptoSMP()),
        controllerCrypto: Bool = true
    ) throws -> EnginesOnVirtualLink {
        var link = try EnginesOnVirtualLink(timing: .radio(), recordsPackets: true, controller: { $0.controllerCrypto = controllerCrypto })
        link.central.engine.configureSecurity(HostSecurityConfiguration(pairing: central, crypto: centralCrypto))
        link.peripheral.engine.configureSecurity(HostSecurityConfiguration(pairing: peripheral, crypto: .controller))
        link.settle()
        return link
    }

    /// The peripheral's commands to its controller with these opcodes.
    static func peripheralCommands(_ link: EnginesOnVirtualLink, _ opcodes: Set<UInt16>) -> Int {
        link.packets.filter { record in
            let bytes = Array(record.packet.payload)
            guard record.station == 1, record.direction == .hostToController, record.packet.type == .command, bytes.count >= 2
            else { return false }
            return opcodes.contains(UInt16(bytes[0]) | UInt16(bytes[1]) << 8)
        }.count
    }

    @Test func secureConnectionsJustWorksThroughTheControllersCrypto() throws {
        var link = try Self.scene(
            central: PairingConfiguration(ioCapability: .noInputNoOutput),
            peripheral: PairingConfiguration(ioCapability: .noInputNoOutput))
        let handle = try link.connect()
        let start = link.now
        let pair = link.perform(.pair(connection: handle), on: 0)
        try link.run(until: { $0.central.result(pair) != nil && $0.peripheral.engine.bonds.count == 1 }, within: .seconds(20))
        #expect(link.central.result(pair) == .success(.secured(.encryptedUnauthenticated)))
        let centralBond = try #require(link.central.engine.bonds.first)
        let peripheralBond = try #require(link.peripheral.engine.bonds.first)
        #expect(centralBond.secureConnections && peripheralBond.secureConnections)
        #expect(centralBond.longTermKey == peripheralBond.longTermKey)
        #expect(link.peripheral.engine.security(connection: handle)?.level == .encryptedUnauthenticated)
        // One P-256 key, one DHKey, Nb from LE Rand (16 octets: 2), and the AES blocks of f4 (6), f5 (3 + 5 + 5,
        // less L = AES-T(0) asked once) and f6 twice (2 × 6, the subkey once): each one HCI round trip.
        #expect(Self.peripheralCommands(link, [0x2025]) == 1)
        #expect(Self.peripheralCommands(link, [0x2026]) == 1)
        #expect(Self.peripheralCommands(link, [0x2018]) == 2)
        let blocks = Self.peripheralCommands(link, [0x2017])
        #expect(blocks == 6 + 12 + 11)
        #expect(link.peripheral.engine.controllerCryptoCommandCount == 4 + blocks)
        print("controller-crypto pairing: \(link.peripheral.engine.controllerCryptoCommandCount) commands, \(link.now - start) virtual")

        // The bond encrypts the next connection without pairing again.
        let disconnect = link.perform(.disconnect(handle: handle, reason: .remoteUserTerminatedConnection), on: 0)
        try link.run(until: { $0.central.result(disconnect) != nil && $0.peripheral.engine.connectionHandles.isEmpty }, within: .seconds(5))
        let again = try link.connect()
        let before = link.peripheral.engine.controllerCryptoCommandCount
        let encrypt = link.perform(.encrypt(connection: again), on: 0)
        try link.run(until: { $0.central.result(encrypt) != nil }, within: .seconds(5))
        #expect(link.central.result(encrypt) == .success(.secured(.encryptedUnauthenticated)))
        #expect(link.peripheral.engine.controllerCryptoCommandCount == before)
    }

    /// Passkey Entry (the peripheral displays, the central types), with both hosts on their controllers' crypto.
    @Test func passkeyEntryWithBothSidesOnControllerCrypto() throws {
        var link = try Self.scene(
            central: PairingConfiguration(ioCapability: .keyboardOnly, mitmRequired: true),
            peripheral: PairingConfiguration(ioCapability: .displayOnly, mitmRequired: true),
            centralCrypto: .controller)
        let handle = try link.connect()
        let pair = link.perform(.pair(connection: handle), on: 0)
        var shown: UInt32?
        try link.run(until: { link in
            link.peripheral.events.contains { if case .passkeyDisplay = $0 { true } else { false } }
        }, within: .seconds(10))
        for case .passkeyDisplay(_, let passkey) in link.peripheral.takeEvents() { shown = passkey }
        let passkey = try #require(shown)
        link.perform(.passkeyReply(connection: handle, passkey: passkey), on: 0)
        try link.run(until: { $0.central.result(pair) != nil && $0.peripheral.engine.bonds.count == 1 }, within: .seconds(30))
        #expect(link.central.result(pair) == .success(.secured(.secureConnectionsAuthenticated)))
        #expect(link.central.engine.bonds.first?.longTermKey == link.peripheral.engine.bonds.first?.longTermKey)
        #expect(link.central.engine.controllerCryptoCommandCount > 20 * 6)
    }

    /// A controller without LE Encrypt, LE Read Local P-256 Public Key and LE Generate DHKey: the engine set to
    /// use them answers the Pairing Request with Pairing Not Supported, and its own `.pair` fails the same way.
    @Test func controllerWithoutCryptoAnswersPairingNotSupported() throws {
        var link = try Self.scene(
            central: PairingConfiguration(ioCapability: .noInputNoOutput),
            peripheral: PairingConfiguration(ioCapability: .noInputNoOutput), controllerCrypto: false)
        let handle = try link.connect()
        let pair = link.perform(.pair(connection: handle), on: 0)
        try link.run(until: { $0.central.result(pair) != nil }, within: .seconds(10))
        #expect(link.central.result(pair) == .failure(.security(.pairingFailed(.remote(.pairingNotSupported)))))
        let own = link.perform(.pair(connection: link.peripheral.engine.connectionHandles[0]), on: 1)
        #expect(link.peripheral.result(own) == .failure(.security(.pairingFailed(.local(.pairingNotSupported)))))
        #expect(Self.peripheralCommands(link, [0x2017, 0x2025, 0x2026]) == 0)
    }
}
