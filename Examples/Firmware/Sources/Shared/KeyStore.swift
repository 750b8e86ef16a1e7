import BluewireCore
import BluewireHostEngine
import BluewireSMP

/// What the board keeps across a reset: the address it advertises and connects from (its identity: a
/// bonded peer finds it again by it) and its bonds.
struct StoredKeys {
    var address: BluetoothAddress
    var bonds: [HostBond]
}

/// Where `StoredKeys` live: loaded once at start, saved whenever a pairing bonds. The QEMU board keeps them in
/// a file on the host (`SemihostingKeyStore`); a board with flash implements `board_store_load` and
/// `board_store_save` (Startup/board.h) over a reserved flash sector instead, and nothing here changes.
protocol KeyStore {
    mutating func load() -> StoredKeys?
    mutating func save(_ keys: StoredKeys)
}

/// The key store through `board_store_load` / `board_store_save` (ARM semihosting under QEMU:
/// `scripts/firmware.sh run ... --store FILE`). Without a store file, nothing loads and nothing is kept.
struct SemihostingKeyStore: KeyStore {
    mutating func load() -> StoredKeys? {
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = buffer.withUnsafeMutableBufferPointer { board_store_load($0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return KeyStoreEncoding.decode(Array(buffer[0..<Int(count)]))
    }

    mutating func save(_ keys: StoredKeys) {
        let bytes = KeyStoreEncoding.encode(keys)
        _ = bytes.withUnsafeBufferPointer { board_store_save($0.baseAddress, $0.count) }
    }
}

/// The store's octets: "BWK1", the address (6 octets least significant first, then 0 public / 1 random),
/// the bond count, then per bond: the peer address (7), flags, key size and the keys the flags announce.
/// Keys are in SMP's order (least significant first), as `HostBond` holds them. Compact and fixed, rather
/// than `BondFile`'s JSON, whose parser and String handling would cost the image kilobytes of flash.
enum KeyStoreEncoding {
    static let magic: [UInt8] = [0x42, 0x57, 0x4B, 0x31]
    static let secureConnections: UInt8 = 1 << 0
    static let authenticated: UInt8 = 1 << 1
    static let hasLongTermKey: UInt8 = 1 << 2
    static let hasLocalLegacyKey: UInt8 = 1 << 3
    static let hasPeerIdentity: UInt8 = 1 << 4
    static let hasPeerIRK: UInt8 = 1 << 5

    static func encode(_ keys: StoredKeys) -> [UInt8] {
        var out = magic
        appendAddress(keys.address, to: &out)
        out.append(UInt8(truncatingIfNeeded: min(keys.bonds.count, 255)))
        for bond in keys.bonds.prefix(255) {
            appendAddress(bond.peer, to: &out)
            var flags: UInt8 = 0
            if bond.secureConnections { flags |= secureConnections }
            if bond.authenticated { flags |= authenticated }
            if bond.longTermKey?.count == 16 { flags |= hasLongTermKey }
            let local = bond.localKeys
            if local.longTermKey?.count == 16, local.ediv != nil, local.rand?.count == 8 { flags |= hasLocalLegacyKey }
            if bond.peerKeys.identityAddress?.octets.count == 6 { flags |= hasPeerIdentity }
            if bond.peerKeys.identityResolvingKey?.count == 16 { flags |= hasPeerIRK }
            out.append(flags)
            out.append(bond.keySize)
            if flags & hasLongTermKey != 0, let ltk = bond.longTermKey { out += ltk }
            if flags & hasLocalLegacyKey != 0, let ltk = local.longTermKey, let ediv = local.ediv, let rand = local.rand {
                out += ltk
                out.append(UInt8(truncatingIfNeeded: ediv))
                out.append(UInt8(truncatingIfNeeded: ediv >> 8))
                out += rand
            }
            if flags & hasPeerIdentity != 0, let identity = bond.peerKeys.identityAddress {
                out += identity.octets
                out.append(identity.isRandom ? 1 : 0)
            }
            if flags & hasPeerIRK != 0, let irk = bond.peerKeys.identityResolvingKey { out += irk }
        }
        return out
    }

    /// Nil for anything but a whole, well-formed store (a torn write starts the board afresh).
    static func decode(_ bytes: [UInt8]) -> StoredKeys? {
        var reader = Reader(bytes: bytes)
        guard reader.take(4) == magic, let address = reader.address(), let count = reader.take(1)?.first else { return nil }
        var bonds: [HostBond] = []
        for _ in 0..<count {
            guard let peer = reader.address(), let header = reader.take(2) else { return nil }
            let flags = header[0]
            var ltk: [UInt8]?
            var local = DistributedKeys()
            var peerKeys = DistributedKeys()
            if flags & hasLongTermKey != 0 {
                guard let key = reader.take(16) else { return nil }
                ltk = key
            }
            if flags & hasLocalLegacyKey != 0 {
                guard let key = reader.take(16), let ediv = reader.take(2), let rand = reader.take(8) else { return nil }
                local.longTermKey = key
                local.ediv = UInt16(ediv[0]) | UInt16(ediv[1]) << 8
                local.rand = rand
            }
            if flags & hasPeerIdentity != 0 {
                guard let octets = reader.take(6), let type = reader.take(1) else { return nil }
                peerKeys.identityAddress = SMPAddress(isRandom: type[0] != 0, octets: octets)
            }
            if flags & hasPeerIRK != 0 {
                guard let irk = reader.take(16) else { return nil }
                peerKeys.identityResolvingKey = irk
            }
            bonds.append(HostBond(
                peer: peer, secureConnections: flags & secureConnections != 0, authenticated: flags & authenticated != 0,
                keySize: header[1], longTermKey: ltk, localKeys: local, peerKeys: peerKeys))
        }
        return reader.offset == bytes.count ? StoredKeys(address: address, bonds: bonds) : nil
    }

    static func appendAddress(_ address: BluetoothAddress, to out: inout [UInt8]) {
        for index in 0..<6 { out.append(UInt8(truncatingIfNeeded: address.value >> UInt64(8 * index))) }
        out.append(address.type.isRandom ? 1 : 0)
    }

    struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func take(_ count: Int) -> [UInt8]? {
            guard count <= bytes.count - offset else { return nil }
            defer { offset += count }
            return Array(bytes[offset..<offset + count])
        }

        mutating func address() -> BluetoothAddress? {
            guard let octets = take(7) else { return nil }
            var value: UInt64 = 0
            for index in 0..<6 { value |= UInt64(octets[index]) << UInt64(8 * index) }
            return BluetoothAddress(value: value, type: octets[6] != 0 ? .random : .public)
        }
    }
}
