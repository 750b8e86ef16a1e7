import ArgumentParser
import Bluewire
import Foundation

/// `bluewire bonds list|remove`: the bond file `pair` keeps (Docs/BondFormat.md), without a controller.
struct BondsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bonds",
        abstract: "List or remove the bonds in the bond file (--keys).",
        subcommands: [BondsListCommand.self, BondsRemoveCommand.self]
    )
}

struct BondsListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the bonds: peer, identity, level, key size, which keys are stored (not their values).")

    @OptionGroup var keyFile: KeyFileOptions

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    func run() throws {
        let path = keyFile.path
        let contents: KeyFile.Contents
        do {
            contents = try KeyFile.load(path)
        } catch {
            fail("\(error)")
        }
        print(json ? BondsOutput.json(contents, path: path) : BondsOutput.text(contents, path: path))
    }
}

struct BondsRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove the bond with a peer (by the address it paired from or its identity address).",
        discussion: """
            Without /random or /public the address matches either type. The next `bluewire pair` with that \
            peer pairs again (the peer may still hold its keys: remove them there too). Exit status 1 when the \
            file holds no bond with that address.
            """)

    @Argument(help: ArgumentHelp("The peer: AA:BB:CC:DD:EE:FF or AA:BB:CC:DD:EE:FF/random.", valueName: "address"))
    var address: String

    @OptionGroup var keyFile: KeyFileOptions

    func validate() throws { _ = try parsePeerAddress(address) }

    func run() throws {
        let peer = try parsePeerAddress(address)
        let path = keyFile.path
        let contents: KeyFile.Contents
        do {
            contents = try KeyFile.load(path)
        } catch {
            fail("\(error)")
        }
        let typed = address.contains("/")
        let kept = contents.bonds.filter { !BondsOutput.matches($0, peer, typed: typed) }
        guard kept.count < contents.bonds.count else {
            fail("no bond with \(address) in \(path)\(contents.exists ? "" : " (the file does not exist)")")
        }
        do {
            try KeyFile.save(kept, localAddress: contents.localAddress, to: path)
        } catch {
            fail("\(error)")
        }
        print("removed the bond with \(address) from \(path)")
    }
}

/// What `bonds list` prints.
enum BondsOutput {
    /// Whether `bond` is the one with `address`: the address it paired from, or the identity address
    /// the peer distributed; the address type counts only when the user wrote it (`typed`).
    static func matches(_ bond: HostBond, _ address: BluetoothAddress, typed: Bool) -> Bool {
        var candidates = [bond.peer]
        if let identity = identity(bond) { candidates.append(identity) }
        return candidates.contains { $0.value == address.value && (!typed || $0.type.isRandom == address.type.isRandom) }
    }

    static func identity(_ bond: HostBond) -> BluetoothAddress? {
        guard let identity = bond.peerKeys.identityAddress else { return nil }
        let value = identity.octets.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return BluetoothAddress(value: value, type: identity.isRandom ? .random : .public)
    }

    /// The names of the keys a bond holds, in a fixed order (the JSON `keys` array).
    static func keyNames(_ bond: HostBond) -> [String] {
        var names: [String] = []
        if bond.longTermKey != nil { names.append("ltk") }
        if bond.localKeys.longTermKey != nil { names.append("local_ltk") }
        if bond.localKeys.identityResolvingKey != nil { names.append("local_irk") }
        if bond.localKeys.signatureKey != nil { names.append("local_csrk") }
        if bond.peerKeys.longTermKey != nil { names.append("peer_ltk") }
        if bond.peerKeys.identityResolvingKey != nil { names.append("peer_irk") }
        if bond.peerKeys.signatureKey != nil { names.append("peer_csrk") }
        return names
    }

    static func text(_ contents: KeyFile.Contents, path: String) -> String {
        guard contents.exists else { return "no bonds: \(path) does not exist yet" }
        let local = contents.localAddress.map { ", local address \(KeyFile.addressText($0))" } ?? ""
        var lines = ["\(path)\(local): \(contents.bonds.count) bond\(contents.bonds.count == 1 ? "" : "s")"]
        for bond in contents.bonds {
            var line = KeyFile.addressText(bond.peer)
            if let identity = identity(bond), identity != bond.peer { line += " (identity \(KeyFile.addressText(identity)))" }
            line += ": level \(bond.level.rawValue) (\(PairOutput.levelName(bond.level))), "
            line += bond.secureConnections ? "LE Secure Connections" : "legacy pairing"
            line += ", key size \(bond.keySize), keys \(keyNames(bond).joined(separator: " "))"
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ contents: KeyFile.Contents, path: String) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.field("file", path)
        w.key("exists")
        w.bool(contents.exists)
        w.key("local_address")
        if let local = contents.localAddress { w.string(KeyFile.addressText(local)) } else { w.null() }
        w.key("bonds")
        w.beginArray()
        for bond in contents.bonds {
            w.beginObject()
            w.field("peer", KeyFile.addressText(bond.peer))
            w.key("identity")
            if let identity = identity(bond) { w.string(KeyFile.addressText(identity)) } else { w.null() }
            w.field("level", Int(bond.level.rawValue))
            w.field("level_name", PairOutput.levelName(bond.level))
            w.key("secure_connections")
            w.bool(bond.secureConnections)
            w.key("authenticated")
            w.bool(bond.authenticated)
            w.field("key_size", Int(bond.keySize))
            w.key("keys")
            w.beginArray()
            for name in keyNames(bond) { w.string(name) }
            w.endArray()
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return w.text
    }
}
