import BluewireCore
import BluewireGATT
import BluewireSMP

/// The bond store as a JSON document, so bonds outlive the process (`bluewire pair --bonds FILE`).
/// Format (Docs/BondFormat.md):
///
/// ```json
/// {"bluewire_bonds": 1, "local_address": "C4:5A:17:00:B1:0E/random",
///  "bonds": [{"peer": "F9:C3:24:B4:A7:BE/random", "secure_connections": true,
///   "authenticated": false, "key_size": 16, "ltk": "402d…",
///   "local": {"irk": "…"}, "peer_keys": {"irk": "…", "identity": "F9:C3:24:B4:A7:BE/random"}}]}
/// ```
///
/// `local_address` is the address this host had when it bonded: peers find their keys by it, so a
/// host that reuses the bonds must use it again. Keys are hex in the byte order they travel in SMP (Core Vol 3 Part H §3.6: least significant
/// octet first); `ediv` is a number, `rand` hex. The file holds long-term secrets: whoever reads it
/// can decrypt the bonded links' traffic and impersonate either side, so keep it private.
public enum BondFile {
    /// The format version written in `bluewire_bonds`.
    public static let version = 1

    public static func encode(_ bonds: [HostBond], localAddress: BluetoothAddress? = nil) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.field("bluewire_bonds", version)
        if let localAddress { w.field("local_address", addressText(localAddress)) }
        w.key("bonds")
        w.beginArray()
        for bond in bonds {
            w.beginObject()
            w.field("peer", addressText(bond.peer))
            w.key("secure_connections")
            w.bool(bond.secureConnections)
            w.key("authenticated")
            w.bool(bond.authenticated)
            w.field("key_size", Int(bond.keySize))
            optionalHex(&w, "ltk", bond.longTermKey)
            w.key("local")
            write(bond.localKeys, to: &w)
            w.key("peer_keys")
            write(bond.peerKeys, to: &w)
            w.field("local_sign_counter", Int(bond.localSignCounter))
            if let counter = bond.peerSignCounter { w.field("peer_sign_counter", Int(counter)) }
            w.field("last_used", Int(clamping: bond.lastUsed))
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return w.text
    }

    public static func decode(_ text: String) throws(BondFileError) -> [HostBond] {
        try decodeDocument(text).bonds
    }

    /// The bonds and the local address they were made with.
    public static func decodeDocument(_ text: String) throws(BondFileError) -> (localAddress: BluetoothAddress?, bonds: [HostBond]) {
        let root: JSONValue
        do {
            root = try JSONParser.parse(text)
        } catch {
            throw BondFileError("not JSON: \(error)")
        }
        guard let version = root["bluewire_bonds"]?.integerValue else { throw BondFileError("no \"bluewire_bonds\" version") }
        guard version == Int64(Self.version) else { throw BondFileError("version \(version) not supported (expected \(Self.version))") }
        guard let entries = root["bonds"]?.arrayElements else { throw BondFileError("no \"bonds\" array") }
        var localAddress: BluetoothAddress?
        if let local = root["local_address"] {
            guard let text = local.stringValue, let address = BluetoothAddress(parsing: text) else {
                throw BondFileError("\"local_address\" must be an address such as AA:BB:CC:DD:EE:FF/random")
            }
            localAddress = address
        }
        var bonds: [HostBond] = []
        for (index, entry) in entries.enumerated() {
            let context = "bond \(index)"
            guard let peerText = entry["peer"]?.stringValue, let peer = BluetoothAddress(parsing: peerText) else {
                throw BondFileError("\(context): \"peer\" must be an address such as AA:BB:CC:DD:EE:FF/random")
            }
            let keySize = try integer(entry["key_size"], in: 7...16, "\(context): \"key_size\"")
            var bond = HostBond(
                peer: peer, secureConnections: try flag(entry["secure_connections"], "\(context): \"secure_connections\""),
                authenticated: try flag(entry["authenticated"], "\(context): \"authenticated\""), keySize: UInt8(keySize),
                longTermKey: try key(entry["ltk"], length: 16, "\(context).ltk"),
                localKeys: try keys(entry["local"], "\(context).local"),
                peerKeys: try keys(entry["peer_keys"], "\(context).peer_keys"))
            bond.localSignCounter = try counter(entry["local_sign_counter"], "\(context).local_sign_counter") ?? 0
            bond.peerSignCounter = try counter(entry["peer_sign_counter"], "\(context).peer_sign_counter")
            // Absent in files written before the store counted uses: 0, evicted first among equals.
            if let used = entry["last_used"] {
                bond.lastUsed = UInt64(try integer(used, in: 0...Int64.max, "\(context).last_used"))
            }
            bonds.append(bond)
        }
        return (localAddress, bonds)
    }

    // MARK: parts

    /// A sign counter (0...2^32-1), absent in files written before signed writes.
    static func counter(_ value: JSONValue?, _ context: String) throws(BondFileError) -> UInt32? {
        guard let value else { return nil }
        return UInt32(try integer(value, in: 0...Int64(UInt32.max), context))
    }

    /// A required integer in `range`. A value of another JSON type (`"16"`, a string) is named as a
    /// type error rather than as out of range: the number may be right and only its quotes wrong.
    static func integer(_ value: JSONValue?, in range: ClosedRange<Int64>, _ context: String) throws(BondFileError) -> Int64 {
        let expected = "an integer \(range.lowerBound)-\(range.upperBound)"
        guard let value else { throw BondFileError("\(context) is missing (\(expected))") }
        guard case .number = value.kind else { throw BondFileError("\(context) must be \(expected), not a \(value.kindName)") }
        guard let number = value.integerValue else { throw BondFileError("\(context) must be \(expected), not a fraction") }
        guard range.contains(number) else { throw BondFileError("\(context) must be \(range.lowerBound)-\(range.upperBound), not \(number)") }
        return number
    }

    /// An optional boolean (absent: false); `"true"`, a string, is a type error, not false.
    static func flag(_ value: JSONValue?, _ context: String) throws(BondFileError) -> Bool {
        guard let value else { return false }
        guard let flag = value.boolValue else { throw BondFileError("\(context) must be true or false, not a \(value.kindName)") }
        return flag
    }

    static func addressText(_ address: BluetoothAddress) -> String {
        address.hexString + (address.type.isRandom ? "/random" : "")
    }

    static func addressText(_ address: SMPAddress) -> String {
        address.octets.reversed().map { hex($0, width: 2).uppercased() }.joined(separator: ":") + (address.isRandom ? "/random" : "")
    }

    static func optionalHex(_ w: inout JSONWriter, _ name: String, _ bytes: [UInt8]?) {
        w.key(name)
        if let bytes { w.string(hexString(bytes)) } else { w.null() }
    }

    static func write(_ keys: DistributedKeys, to w: inout JSONWriter) {
        w.beginObject()
        if let ltk = keys.longTermKey { w.field("ltk", hexString(ltk)) }
        if let ediv = keys.ediv { w.field("ediv", Int(ediv)) }
        if let rand = keys.rand { w.field("rand", hexString(rand)) }
        if let irk = keys.identityResolvingKey { w.field("irk", hexString(irk)) }
        if let identity = keys.identityAddress { w.field("identity", addressText(identity)) }
        if let csrk = keys.signatureKey { w.field("csrk", hexString(csrk)) }
        w.endObject()
    }

    static func key(_ value: JSONValue?, length: Int, _ context: String) throws(BondFileError) -> [UInt8]? {
        guard let value, value.kind != .null else { return nil }
        guard let text = value.stringValue else {
            throw BondFileError("\(context) must be \(length) octets of hex in a string, not a \(value.kindName)")
        }
        guard let bytes = parseHex(text), bytes.count == length else {
            throw BondFileError("\(context) must be \(length) octets of hex")
        }
        return bytes
    }

    static func keys(_ value: JSONValue?, _ context: String) throws(BondFileError) -> DistributedKeys {
        var keys = DistributedKeys()
        guard let value, value.kind != .null else { return keys }
        guard value.objectMembers != nil else { throw BondFileError("\(context) must be an object") }
        keys.longTermKey = try key(value["ltk"], length: 16, "\(context).ltk")
        if let ediv = value["ediv"] {
            keys.ediv = UInt16(try integer(ediv, in: 0...0xFFFF, "\(context).ediv"))
        }
        keys.rand = try key(value["rand"], length: 8, "\(context).rand")
        keys.identityResolvingKey = try key(value["irk"], length: 16, "\(context).irk")
        keys.signatureKey = try key(value["csrk"], length: 16, "\(context).csrk")
        if let identity = value["identity"] {
            guard let text = identity.stringValue, let address = BluetoothAddress(parsing: text) else {
                throw BondFileError("\(context).identity must be an address")
            }
            keys.identityAddress = SMPAddress(isRandom: address.type.isRandom, octets: address.littleEndianBytes)
        }
        return keys
    }
}

/// Why a bond file was refused.
public struct BondFileError: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
