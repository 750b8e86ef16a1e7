import BluewireCore
import BluewireCrypto
import BluewireHCI
import BluewireHostEngine
import BluewireSMP
import BluewireTesting
import HostTestSupport
import Testing

/// The controller's resolving list (Core Vol 4 Part E §7.8.38–44): after bonding with a peer that
/// advertises from resolvable private addresses, the central's engine loads the peer's IRK and identity
/// into its controller's list and turns address resolution on; the controller then reports the peer by its
/// identity (address type 0x03, a random static identity) in advertising reports and LE Enhanced
/// Connection Complete, and reaches it by identity whatever private address it uses now.
///
/// These run on the virtual controller because it is the only controller here that resolves: bumble
/// 0.0.236's controller accepts the resolving list commands but its handlers do nothing (it reports every
/// private address as it is), so against bumble the engine's host resolution does the work
/// (EnginePrivacyBumbleTests). Both engines are ours, the peripheral advertising with privacy on
/// (a new private address every two seconds), on a VirtualLink with radio timing, in virtual time.
@Suite("Host engine: the controller's resolving list, on the virtual controller")
struct EngineResolvingListTests {
    static let identity = EnginesOnVirtualLink.peripheralAddress
    static let irk: [UInt8] = (0..<16).map { UInt8(0xB0 + $0) }
    static let name = "rl-peer"
    /// Local_IRK of the central's entries: it has no IRK of its own.
    static let noLocalIRK = [UInt8](repeating: 0, count: 16)

    /// Two engines with security; the controllers have the resolving list with `llPrivacy`, and the
    /// central's engine uses it when `controllerResolution`.
    static func scene(llPrivacy: Bool, controllerResolution: Bool = true) throws -> EnginesOnVirtualLink {
        var link = try EnginesOnVirtualLink(
            timing: .radio(), recordsPackets: true,
            controller: { if llPrivacy { $0.leFeatures.insert(.llPrivacy) } },
            engine: { _, configuration in configuration.controllerAddressResolution = controllerResolution })
        let crypto = SMPCrypto(SwiftCryptoSMP())
        link.peripheral.engine.configureSecurity(HostSecurityConfiguration(
            pairing: PairingConfiguration(
                ioCapability: .noInputNoOutput, identityResolvingKey: irk, identityAddress: identity.smpForm),
            crypto: crypto, privacy: PrivacyConfiguration(rotationInterval: .seconds(2))))
        link.central.engine.configureSecurity(HostSecurityConfiguration(
            pairing: PairingConfiguration(ioCapability: .noInputNoOutput), crypto: crypto))
        link.settle()
        return link
    }

    /// The commands the central's engine sent, decoded, from packet `from` on.
    static func centralCommands(_ link: EnginesOnVirtualLink, from: Int = 0) -> [HCICommand] {
        link.packets.dropFirst(from).compactMap { record in
            guard record.station == 0, record.direction == .hostToController, record.packet.type == .command else { return nil }
            return try? HCICommand(decoding: record.packet.payload)
        }
    }

    static func isResolvingListCommand(_ command: HCICommand) -> Bool {
        switch command {
        case .leReadResolvingListSize, .leClearResolvingList, .leAddDeviceToResolvingList, .leSetAddressResolutionEnable:
            return true
        default: return false
        }
    }

    /// The central controller's Command Complete statuses for resolving list commands (opcodes 0x2027–0x202D).
    static func resolvingListStatuses(_ link: EnginesOnVirtualLink) -> [UInt8] {
        link.packets.compactMap { record in
            let bytes = Array(record.packet.payload)
            guard record.station == 0, record.direction == .controllerToHost, bytes.count >= 6, bytes[0] == 0x0E else { return nil }
            let opcode = UInt16(bytes[3]) | UInt16(bytes[4]) << 8
            return (0x2027...0x202D).contains(opcode) ? bytes[5] : nil
        }
    }

    /// The central's LE (Enhanced) Connection Complete events, decoded.
    static func centralConnectionCompletes(_ link: EnginesOnVirtualLink) -> [LEConnectionComplete] {
        link.packets.compactMap { record in
            guard record.station == 0, record.direction == .controllerToHost, record.packet.type == .event,
                  case .leMeta(let meta)? = try? HCIEvent(decoding: record.packet.payload) else { return nil }
            switch meta {
            case .connectionComplete(let cc), .enhancedConnectionComplete(let cc): return cc
            default: return nil
            }
        }
    }

    /// Scans until the peripheral is reported from an address not in `excluding`, then stops the scan.
    static func scan(_ link: inout EnginesOnVirtualLink, excluding: [BluetoothAddress] = []) throws -> DiscoveredDevice {
        _ = link.central.takeEvents()
        func found(_ link: EnginesOnVirtualLink) -> DiscoveredDevice? {
            for case .deviceFound(let device) in link.central.events where !excluding.contains(device.address) { return device }
            return nil
        }
        link.perform(.startScan(ScanParameters(), filter: AdvertisingFilter(namePrefix: name)), on: 0)
        try link.run(until: { found($0) != nil }, within: .seconds(5))
        let device = try #require(found(link))
        let stop = link.perform(.stopScan, on: 0)
        try link.run(until: { $0.central.result(stop) != nil }, within: .seconds(2))
        return device
    }

    /// Connects to `peer` and returns the connection.
    static func connect(_ link: inout EnginesOnVirtualLink, to peer: BluetoothAddress) throws -> HostConnection {
        let id = link.perform(.connect(peer, LEConnectionParameters()), on: 0)
        try link.run(until: { $0.central.result(id) != nil }, within: .seconds(5))
        guard case .success(.connected(let connection))? = link.central.result(id) else {
            Issue.record("connect to \(peer): \(String(describing: link.central.result(id)))")
            throw EngineLinkError.connectionFailed
        }
        return connection
    }

    static func disconnect(_ link: inout EnginesOnVirtualLink, _ handle: UInt16) throws {
        let id = link.perform(.disconnect(handle: handle, reason: .remoteUserTerminatedConnection), on: 0)
        try link.run(until: { $0.central.result(id) != nil && $0.peripheral.engine.connectionHandles.isEmpty }, within: .seconds(5))
    }

    /// Pairs on `handle` (Just Works, bonding) and returns the central's bond.
    static func pair(_ link: inout EnginesOnVirtualLink, _ handle: UInt16) throws -> HostBond {
        let id = link.perform(.pair(connection: handle), on: 0)
        try link.run(until: { $0.central.result(id) != nil }, within: .seconds(10))
        #expect(link.central.result(id) == .success(.secured(.encryptedUnauthenticated)))
        let bonds = link.central.takeEvents().compactMap { event -> HostBond? in
            if case .paired(_, let keys, true, _) = event { return keys }
            return nil
        }
        return try #require(bonds.first, "the central bonded")
    }

    // MARK: tests

    @Test("after bonding the peer's IRK is in the controller's list; scan, reconnection and reconnection after a rotation come with the identity from the controller")
    func controllerResolvesBondedPeer() throws {
        var link = try Self.scene(llPrivacy: true)
        link.perform(.startAdvertising(.named(Self.name)), on: 1)
        let first = try Self.scan(&link)
        #expect(first.address.randomKind == .resolvablePrivate && first.identityAddress == nil, "no bond yet")
        // Without bonds no resolving list command is sent at all.
        #expect(!Self.centralCommands(link).contains(where: Self.isResolvingListCommand))

        let connection = try Self.connect(&link, to: first.address)
        let mark = link.packets.count
        let bond = try Self.pair(&link, connection.handle)
        #expect(bond.peerKeys.identityResolvingKey == Self.irk && bond.peerKeys.identityAddress == Self.identity.smpForm)
        // Connected, not scanning, advertising or initiating: the list is written at once, after its size
        // (LE Read Resolving List Size, §7.8.41).
        let written = Self.centralCommands(link, from: mark).filter(Self.isResolvingListCommand)
        #expect(written == [
            .leReadResolvingListSize,
            .leClearResolvingList,
            .leAddDeviceToResolvingList(LEAddDeviceToResolvingList(peerIdentityAddress: Self.identity, peerIRK: Self.irk, localIRK: Self.noLocalIRK)),
            .leSetAddressResolutionEnable(LESetAddressResolutionEnable(enable: true)),
        ])
        #expect(Self.resolvingListStatuses(link).allSatisfy { $0 == 0x00 }, "every resolving list command succeeded")
        try Self.disconnect(&link, connection.handle)

        // A rotation later, the controller reports the peer by its identity (type 0x03): no private address.
        link.run(for: .seconds(3))
        let resolved = try Self.scan(&link)
        #expect(resolved.address == BluetoothAddress(value: Self.identity.value, type: .randomIdentity))
        #expect(resolved.identityAddress == Self.identity)

        // Connecting by identity asks the controller for the identity (Peer_Address_Type 0x03).
        let commandsBefore = Self.centralCommands(link).count
        let again = try Self.connect(&link, to: Self.identity)
        let create = Self.centralCommands(link).dropFirst(commandsBefore).compactMap { command -> BluetoothAddress? in
            switch command {
            case .leExtendedCreateConnection(let c): return c.peerAddress
            case .leCreateConnection(let c): return c.peerAddress
            default: return nil
            }
        }
        #expect(create == [BluetoothAddress(value: Self.identity.value, type: .randomIdentity)])
        let complete = try #require(Self.centralConnectionCompletes(link).last)
        #expect(complete.peerAddress.type == .randomIdentity && complete.peerAddress.value == Self.identity.value)
        #expect(again.identityAddress == Self.identity)
        #expect(again.peer.randomKind == .resolvablePrivate && again.peer == complete.peerResolvablePrivateAddress)
        #expect(again.peer != first.address, "the peer rotated since pairing")
        // The bond encrypts the link: no second pairing.
        let encrypt = link.perform(.encrypt(connection: again.handle), on: 0)
        try link.run(until: { $0.central.result(encrypt) != nil }, within: .seconds(5))
        #expect(link.central.result(encrypt) == .success(.secured(.encryptedUnauthenticated)))
        try Self.disconnect(&link, again.handle)

        // Another rotation, no scan: the controller still finds the peer by its identity.
        link.run(for: .seconds(3))
        let third = try Self.connect(&link, to: Self.identity)
        #expect(third.identityAddress == Self.identity)
        #expect(third.peer.randomKind == .resolvablePrivate && third.peer != again.peer)
        #expect(Self.resolvingListStatuses(link).allSatisfy { $0 == 0x00 })
    }

    @Test("a controller without the list, or with controller resolution turned off: no list command, the host resolves",
          arguments: [(false, true), (true, false)])
    func hostResolvesWithoutControllerList(_ llPrivacy: Bool, _ controllerResolution: Bool) throws {
        var link = try Self.scene(llPrivacy: llPrivacy, controllerResolution: controllerResolution)
        link.perform(.startAdvertising(.named(Self.name)), on: 1)
        let first = try Self.scan(&link)
        let connection = try Self.connect(&link, to: first.address)
        _ = try Self.pair(&link, connection.handle)
        try Self.disconnect(&link, connection.handle)
        link.run(for: .seconds(3))
        let resolved = try Self.scan(&link, excluding: [first.address])
        // The private address as the controller reported it, resolved in the host with the bond's IRK.
        #expect(resolved.address.type == .random && resolved.address.randomKind == .resolvablePrivate)
        #expect(resolved.identityAddress == Self.identity)
        let again = try Self.connect(&link, to: Self.identity)
        #expect(again.peer == resolved.address && again.identityAddress == Self.identity)
        let listCommands = Self.centralCommands(link).filter(Self.isResolvingListCommand)
        #expect(listCommands.isEmpty, "no resolving list command: \(listCommands)")
    }

    @Test("a bond added while scanning waits for the scan to stop: no disallowed command, then the list is written")
    func bondAddedWhileScanningWaits() throws {
        var link = try Self.scene(llPrivacy: true)
        link.perform(.startAdvertising(.named(Self.name)), on: 1)
        link.perform(.startScan(ScanParameters(), filter: AdvertisingFilter(namePrefix: Self.name)), on: 0)
        try link.run(until: { $0.central.engine.isScanning }, within: .seconds(1))
        link.run(for: .milliseconds(200))
        let mark = Self.centralCommands(link).count
        var peerKeys = DistributedKeys()
        peerKeys.identityResolvingKey = Self.irk
        peerKeys.identityAddress = Self.identity.smpForm
        link.central.engine.addBond(HostBond(
            peer: Self.identity, secureConnections: true, authenticated: false, keySize: 16,
            longTermKey: [UInt8](repeating: 0x11, count: 16), localKeys: DistributedKeys(), peerKeys: peerKeys))
        link.settle()
        // Past the peripheral's next rotation: a private address the new bond resolves.
        link.run(for: .milliseconds(2500))
        // Only the size is read while scanning (allowed at any time, §7.8.41); the list waits.
        #expect(Array(Self.centralCommands(link).dropFirst(mark)) == [.leReadResolvingListSize], "only the size while scanning")
        let listMark = Self.centralCommands(link).count
        // Meanwhile the host resolves the peer's private addresses with the new bond.
        #expect(link.central.takeEvents().contains { event in
            if case .deviceFound(let device) = event { return device.identityAddress == Self.identity }
            return false
        })

        let stop = link.perform(.stopScan, on: 0)
        try link.run(until: { $0.central.result(stop) != nil }, within: .seconds(2))
        let after = Array(Self.centralCommands(link).dropFirst(listMark))
        #expect(after.first.map { if case .leSetExtendedScanEnable = $0 { return true }; if case .leSetScanEnable = $0 { return true }; return false } == true,
                "the scan stops first: \(after)")
        #expect(after.dropFirst() == [
            .leClearResolvingList,
            .leAddDeviceToResolvingList(LEAddDeviceToResolvingList(peerIdentityAddress: Self.identity, peerIRK: Self.irk, localIRK: Self.noLocalIRK)),
            .leSetAddressResolutionEnable(LESetAddressResolutionEnable(enable: true)),
        ])
        #expect(!Self.resolvingListStatuses(link).contains(0x0C), "no Command Disallowed")
        #expect(Self.resolvingListStatuses(link).allSatisfy { $0 == 0x00 })
    }
}
