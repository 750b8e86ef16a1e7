import BluewireCore
import BluewireCrypto
import BluewireHCI
import BluewireHostEngine
import BluewireSMP
import HostTestSupport
import Testing

/// Two engines on one LE link, the test playing both controllers: ACL data from one host is delivered to
/// the other (and its buffers given back with Number Of Completed Packets, bumble's 64 buffers of 27
/// octets), commands are answered as bumble's controller answers them, and encryption is played as the link layer does it (Core Vol 6 Part B
/// §5.1.3.1): LE Enable Encryption on the central becomes LE Long Term Key Request on the peripheral with
/// the same EDIV and Rand, and only when the peripheral's reply carries the central's key do both get
/// Encryption Change with status 0 (Key Refresh Complete on a link already encrypted); a negative reply or
/// another key gives the central PIN or Key Missing (0x06), as a controller does.
///
/// With pairing configurations, both sides run the real Security Manager with swift-crypto, so every
/// value on the link is computed by the engines; no SMP PDU is scripted. Without (`LinkedEngines()`),
/// the channel and GATT tests get the same link with no security configured. Deterministic: `pump`
/// moves packets until both sides fall silent; no clock moves. (`EnginesOnVirtualLink` is the
/// other two-engine harness: virtual controllers with radio timing and a virtual clock.)
struct LinkedEngines {
    /// The connection handle of the first link (`connect` after `disconnect` takes the next).
    static let firstHandle: UInt16 = 0x0040
    static let centralAddress = BluetoothAddress(value: 0xC4_5A_17_00_C0_01, type: .random)
    static let peripheralAddress = BluetoothAddress(value: 0xC4_5A_17_00_B0_02, type: .random)

    var central: EngineDriver
    var peripheral: EngineDriver
    var handle = Self.firstHandle
    /// The address the peripheral's controller reports for the central (a resolvable private one, say).
    var centralSeenAs = Self.centralAddress
    /// The central's last LE Enable Encryption.
    var encryptionRequest: LEEnableEncryption?
    var encrypted = false
    /// Every Encryption Change status the controllers reported (both sides get the same).
    var encryptionStatuses: [UInt8] = []

    /// Both engines up and connected, the central by a `.connect` request; with a pairing configuration
    /// a side runs the Security Manager.
    init(central centralPairing: PairingConfiguration? = nil, peripheral peripheralPairing: PairingConfiguration? = nil) throws {
        central = EngineDriver(configuration: HostEngineConfiguration(randomAddress: Self.centralAddress))
        peripheral = EngineDriver(configuration: HostEngineConfiguration(randomAddress: Self.peripheralAddress))
        try Self.bringUp(&central)
        try Self.bringUp(&peripheral)
        let crypto = SMPCrypto(SwiftCryptoSMP())
        if let centralPairing {
            central.engine.configureSecurity(HostSecurityConfiguration(pairing: centralPairing, crypto: crypto))
        }
        if let peripheralPairing {
            peripheral.engine.configureSecurity(HostSecurityConfiguration(pairing: peripheralPairing, crypto: crypto))
        }
        connect()
    }

    /// Bring-up on bumble's recorded answers (`Captures/bumble_host_bringup.btsnoop`); unlike
    /// `bringUpFromBumbleCapture` the commands are not compared, as each engine sets its own address.
    static func bringUp(_ driver: inout EngineDriver) throws {
        let id = driver.perform(.start)
        for (direction, packet) in try Captures.packets("bumble_host_bringup.btsnoop") where direction == .controllerToHost {
            driver.controller(packet)
        }
        _ = driver.takeWritten()
        guard case .success(.started)? = driver.result(id) else { throw EngineTestError.bringUpFailed }
    }

    /// Makes the link (again, after `disconnect`): the central connects, both get LE Connection Complete.
    mutating func connect() {
        central.perform(.connect(Self.peripheralAddress, LEConnectionParameters()))
        central.answerCommands()
        central.controller(ControllerBytes.leConnectionComplete(handle: handle, central: true, peer: Self.peripheralAddress))
        peripheral.controller(ControllerBytes.leConnectionComplete(handle: handle, central: false, peer: centralSeenAs))
        encrypted = false
        pump()
        _ = central.takeEvents()
        _ = peripheral.takeEvents()
    }

    /// The central discovers the peripheral's database, as a client does before reading or writing (the
    /// peer's state machine refuses those before a discovery); its events are dropped.
    mutating func discover() {
        let discover = central.perform(.gatt(connection: handle, .discoverAll))
        pump()
        #expect(central.result(discover) != nil, "discovery finished")
        _ = central.takeEvents()
    }

    /// The link drops (both get Disconnection Complete); the next `connect` uses a new handle.
    mutating func disconnect() {
        central.controller(ControllerBytes.disconnectionComplete(handle: handle, reason: 0x13))
        peripheral.controller(ControllerBytes.disconnectionComplete(handle: handle, reason: 0x13))
        handle += 1
        pump()
        _ = central.takeEvents()
        _ = peripheral.takeEvents()
    }

    /// Moves packets until neither host has written anything new (a channel's bulk transfer takes
    /// thousands of rounds; `limit` only turns engines that never fall silent into a failure).
    mutating func pump(limit: Int = 100_000) {
        for _ in 0..<limit {
            let fromCentral = central.takeWritten()
            let fromPeripheral = peripheral.takeWritten()
            if fromCentral.isEmpty && fromPeripheral.isEmpty { return }
            for packet in fromCentral { fromHost(packet, isCentral: true) }
            for packet in fromPeripheral { fromHost(packet, isCentral: false) }
        }
        Issue.record("the engines kept writing")
    }

    mutating func fromHost(_ packet: HCIPacket, isCentral: Bool) {
        switch packet.type {
        case .acl:
            // Host → controller start fragments carry PB 0b00; the receiving controller reports 0b10 (§5.4.2).
            var bytes = Array(packet.payload)
            if bytes.count > 1, bytes[1] & 0x30 == 0 { bytes[1] |= 0x20 }
            let delivered = HCIPacket(type: .acl, payload: bytes)
            let credit = ControllerBytes.completedPackets(handle: handle, count: 1)
            if isCentral {
                peripheral.controller(delivered)
                central.controller(credit)
            } else {
                central.controller(delivered)
                peripheral.controller(credit)
            }
        case .command:
            command(packet, isCentral: isCentral)
        default:
            break
        }
    }

    mutating func command(_ packet: HCIPacket, isCentral: Bool) {
        guard let command = try? HCICommand(decoding: packet.payload) else { return }
        switch command {
        case .leEnableEncryption(let request) where isCentral:
            central.controller(ControllerBytes.commandStatus(.leEnableEncryption))
            encryptionRequest = request
            peripheral.controller(ControllerBytes.event(0x3E, [0x05] + ControllerBytes.le16(handle)
                + (0..<8).map { UInt8(truncatingIfNeeded: request.randomNumber >> UInt64(8 * $0)) }
                + ControllerBytes.le16(request.encryptedDiversifier)))
        case .leLongTermKeyRequestReply(let reply) where !isCentral:
            peripheral.controller(ControllerBytes.commandComplete(.leLongTermKeyRequestReply, returning: ControllerBytes.le16(handle)))
            linkEncrypted(matching: reply.longTermKey == encryptionRequest?.longTermKey)
        case .leLongTermKeyRequestNegativeReply where !isCentral:
            peripheral.controller(ControllerBytes.commandComplete(
                .leLongTermKeyRequestNegativeReply, returning: ControllerBytes.le16(handle)))
            linkEncrypted(matching: false)
        default:
            if let answer = ControllerBytes.answer(packet) {
                if isCentral { central.controller(answer) } else { peripheral.controller(answer) }
            }
        }
    }

    /// Encryption Change (§7.7.8) or Key Refresh Complete (§7.7.39) to both hosts.
    mutating func linkEncrypted(matching: Bool) {
        if !matching {
            encryptionStatuses.append(0x06)
            // The central learns of the failure; the peripheral's controller saw no key (§7.7.8: PIN or Key Missing).
            central.controller(ControllerBytes.event(0x08, [0x06] + ControllerBytes.le16(handle) + [0x00]))
            return
        }
        encryptionStatuses.append(0)
        let event = encrypted
            ? ControllerBytes.event(0x30, [0x00] + ControllerBytes.le16(handle))
            : ControllerBytes.event(0x08, [0x00] + ControllerBytes.le16(handle) + [0x01])
        encrypted = true
        central.controller(event)
        peripheral.controller(event)
    }
}

extension Array where Element == HostEngineEvent {
    var passkeyDisplayed: UInt32? {
        for case .passkeyDisplay(_, let passkey) in self { return passkey }
        return nil
    }
    var comparedValue: UInt32? {
        for case .numericComparison(_, let value) in self { return value }
        return nil
    }
    var pairedKeys: HostBond? {
        for case .paired(_, let keys, _, _) in self { return keys }
        return nil
    }
    var pairingFailure: PairingFailure? {
        for case .pairingFailed(_, let failure) in self { return failure }
        return nil
    }
    var encryptionChanges: [HostEngineEvent] {
        filter { if case .encryptionChanged = $0 { return true }; return false }
    }
}

extension EngineDriver {
    /// The SDUs received on `cid`, in order, taken out of the events.
    mutating func takeSDUs(cid: UInt16) -> [[UInt8]] {
        var sdus: [[UInt8]] = []
        events.removeAll { event in
            guard case .channelSDU(_, let on, let sdu) = event, on == cid else { return false }
            sdus.append(sdu)
            return true
        }
        return sdus
    }

    /// The channel opened by request `id`.
    func openedChannel(_ id: HostRequestID) -> HostChannel? {
        guard case .success(.channelOpened(let channel))? = result(id) else { return nil }
        return channel
    }

    /// The channels a peer opened (`.channelOpened` events with `initiatedLocally` false).
    var incomingChannels: [HostChannel] {
        events.compactMap { if case .channelOpened(let c) = $0, !c.initiatedLocally { return c }; return nil }
    }
}
