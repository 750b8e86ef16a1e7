import BluewireCore
import BluewireCrypto
import BluewireSMP

/// One entry of a controller's resolving list (Core Vol 4 Part E §7.8.38): a peer's identity address and
/// IRK, and the local IRK used towards it. Keys are kept as HCI carries them, least significant octet first.
struct ResolvingListEntry {
    var identity: BluetoothAddress
    var peerIRK: [UInt8]
    var localIRK: [UInt8]
}

/// The resolving list and address resolution (Core Vol 4 Part E §7.8.38–44; Vol 6 Part B §6.2): with
/// resolution enabled, an advertiser or initiator whose resolvable private address a listed peer IRK
/// resolves is reported by its identity address, with address type 0x02 (public identity) or 0x03
/// (random identity), in advertising reports and (Enhanced) Connection Complete, and an initiator asked
/// for an identity (Peer_Address_Type 0x02/0x03) connects to whichever private address resolves to it.
/// `ah` is the Security Manager's (Vol 3 Part H §2.2.2) on swift-crypto's AES, as a host computes it.
extension LinkWorld {
    /// Whether advertising, scanning or initiating runs: the list and resolution may not change then
    /// (while resolution is enabled, for the list).
    func isResolvingListInUse(_ c: ControllerState) -> Bool {
        c.advertisingSets.values.contains { $0.enabled } || c.scan != nil || c.initiator != nil
    }

    /// LE Add Device To Resolving List (§7.8.38), LE Clear Resolving List (§7.8.40).
    func editResolvingList(_ opcode: UInt16, _ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        var entry: ResolvingListEntry?
        if opcode == Op.leAddDeviceToResolvingList {
            let type = try r.readUInt8("Peer_Identity_Address_Type")
            guard type <= 0x01 else { throw r.error(.invalidValue(UInt64(type)), "Peer_Identity_Address_Type") }
            let identity = try r.readAddress(type: type == 0x01 ? .random : .public, "Peer_Identity_Address")
            entry = ResolvingListEntry(
                identity: identity, peerIRK: Array(try r.readBytes(16, "Peer_IRK")), localIRK: Array(try r.readBytes(16, "Local_IRK")))
        }
        try r.expectEnd("parameters")
        guard !(c.addressResolutionEnabled && isResolvingListInUse(c)) else {
            return c.commandComplete(opcode, [Status.commandDisallowed])
        }
        guard let entry else {
            c.resolvingList = []
            return c.commandComplete(opcode, [Status.success])
        }
        // An identity already listed is refused rather than added twice.
        guard !c.resolvingList.contains(where: { $0.identity == entry.identity }) else {
            return c.commandComplete(opcode, [Status.invalidParameters])
        }
        guard c.resolvingList.count < Int(c.configuration.resolvingListSize) else {
            return c.commandComplete(opcode, [Status.memoryCapacityExceeded])
        }
        c.resolvingList.append(entry)
        c.commandComplete(opcode, [Status.success])
    }

    /// LE Read Resolving List Size (§7.8.41).
    func readResolvingListSize(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        try r.expectEnd("parameters")
        c.commandComplete(Op.leReadResolvingListSize, [Status.success, c.configuration.resolvingListSize])
    }

    /// LE Set Address Resolution Enable (§7.8.44): disallowed while advertising, scanning or initiating.
    func setAddressResolutionEnable(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let enable = try r.readUInt8("Address_Resolution_Enable")
        try r.expectEnd("Address_Resolution_Enable")
        guard enable <= 0x01 else { return c.commandComplete(Op.leSetAddressResolutionEnable, [Status.invalidParameters]) }
        guard !isResolvingListInUse(c) else {
            return c.commandComplete(Op.leSetAddressResolutionEnable, [Status.commandDisallowed])
        }
        c.addressResolutionEnabled = enable == 0x01
        c.commandComplete(Op.leSetAddressResolutionEnable, [Status.success])
    }

    /// The identity `c`'s resolving list resolves `address` to, typed 0x02/0x03 as the controller reports it;
    /// nil with resolution off, for an address that is not a resolvable private one, or without such an entry.
    func resolve(_ address: BluetoothAddress, by c: ControllerState) -> BluetoothAddress? {
        guard c.addressResolutionEnabled, address.randomKind == .resolvablePrivate else { return nil }
        // prand is the top 24 bits, hash the bottom 24 (Core Vol 6 Part B §1.3.2.2), most significant first.
        let prand = [UInt8(truncatingIfNeeded: address.value >> 40), UInt8(truncatingIfNeeded: address.value >> 32),
                     UInt8(truncatingIfNeeded: address.value >> 24)]
        let hash = [UInt8(truncatingIfNeeded: address.value >> 16), UInt8(truncatingIfNeeded: address.value >> 8),
                    UInt8(truncatingIfNeeded: address.value)]
        let crypto = SwiftCryptoSMP()
        for entry in c.resolvingList where entry.peerIRK.contains(where: { $0 != 0 }) {
            // ah takes the IRK most significant octet first.
            guard let computed = try? crypto.ah(entry.peerIRK.reversed(), prand), computed == hash else { continue }
            return BluetoothAddress(value: entry.identity.value, type: entry.identity.type.isRandom ? .randomIdentity : .publicIdentity)
        }
        return nil
    }

    /// Whether an initiator's Peer_Address (possibly an identity, 0x02/0x03) designates the advertiser at
    /// `address`: the same address, or, with resolution, a private address resolving to that identity.
    func initiatorWants(_ peer: BluetoothAddress, advertiser address: BluetoothAddress, by c: ControllerState) -> Bool {
        if Self.sameDevice(peer, address) { return true }
        guard let identity = resolve(address, by: c) else { return false }
        return Self.sameDevice(peer, identity)
    }
}

/// The HCI address type of an address as a controller reports it: 0x00 public, 0x01 random, 0x02/0x03
/// an identity it resolved.
func hciAddressType(_ address: BluetoothAddress) -> UInt8 {
    switch address.type {
    case .publicIdentity, .randomIdentity: address.type.rawValue
    default: address.type.isRandom ? 0x01 : 0x00
    }
}
