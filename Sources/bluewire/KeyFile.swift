import ArgumentParser
import Bluewire
import Foundation


/// `--keys FILE`: the bond store of one local identity (Docs/BondFormat.md), shared by `pair`,
/// `bonds`, `gatt`, `serve`, `l2cap` and `scan` (which only reads its peers' IRKs). Default: `$XDG_DATA_HOME/bluewire/keys.json`, or `~/.local/share/bluewire/keys.json`
/// when `XDG_DATA_HOME` is unset, empty or not absolute (the XDG Base Directory rule).
struct KeyFileOptions: ParsableArguments {
    @Option(name: .customLong("keys"), help: ArgumentHelp(
        "Bond store (JSON, Docs/BondFormat.md; default $XDG_DATA_HOME/bluewire/keys.json or ~/.local/share/bluewire/keys.json).",
        valueName: "file"))
    var keys: String?

    /// The name `pair` used before `--keys`; kept so scripts keep working.
    @Option(name: .customLong("bonds"), help: .hidden)
    var bonds: String?

    func validate() throws {
        if keys != nil && bonds != nil { throw ValidationError("give --keys only (--bonds is its old name)") }
    }

    /// The file in use: the option's, else the default in the user's data directory.
    var path: String { keys ?? bonds ?? Self.defaultPath(environment: ProcessInfo.processInfo.environment) }

    /// `$XDG_DATA_HOME/bluewire/keys.json`; `$HOME/.local/share/bluewire/keys.json` when
    /// `XDG_DATA_HOME` is unset, empty or relative (the XDG spec says to ignore a relative one).
    static func defaultPath(environment: [String: String]) -> String {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return data + "/bluewire/keys.json"
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.local/share/bluewire/keys.json"
    }
}

/// Reading and writing a bond file: absent means no bonds yet; damaged is an error naming the file,
/// which is left exactly as it was; writing replaces it atomically with mode 0600.
enum KeyFile {
    struct Contents {
        var localAddress: BluetoothAddress?
        var bonds: [HostBond]
        /// Whether the file was there.
        var exists: Bool
    }

    /// The file's bonds; no bonds when it does not exist. Throws a `CLIError` naming the file when it
    /// cannot be read (in the system's words: "Permission denied", a directory) or is not a bond file.
    static func load(_ path: String) throws(CLIError) -> Contents {
        let bytes: [UInt8]
        do {
            guard let read = try PrivateFile.read(path) else { return Contents(localAddress: nil, bonds: [], exists: false) }
            bytes = read
        } catch {
            throw CLIError("cannot read bond file \(path): \(error.reason)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CLIError("bond file \(path) is damaged (not UTF-8); it was left unchanged")
        }
        do {
            let document = try BondFile.decodeDocument(text)
            return Contents(localAddress: document.localAddress, bonds: document.bonds, exists: true)
        } catch {
            throw CLIError("bond file \(path) is damaged (\(error)); it was left unchanged")
        }
    }

    /// Writes the bonds atomically with mode 0600 (it holds long-term keys): a reader sees the old file
    /// or the new one, never half of one, and a symbolic link stays a link, its target replaced
    /// (`PrivateFile.replace`). The directory is created (mode 0700) if missing.
    static func save(_ bonds: [HostBond], localAddress: BluetoothAddress?, to path: String) throws(CLIError) {
        try write(Array((BondFile.encode(bonds, localAddress: localAddress) + "\n").utf8), to: path)
    }

    /// Writes an encoded bond file (`save`'s second half).
    static func write(_ bytes: [UInt8], to path: String) throws(CLIError) {
        do {
            try PrivateFile.replace(path, with: bytes)
        } catch {
            throw CLIError("cannot write bond file \(path): \(error.reason)")
        }
    }

    /// The address as the bond file and `bonds list` write it (`/random` for a random address).
    static func addressText(_ address: BluetoothAddress) -> String {
        address.hexString + (address.type.isRandom ? "/random" : "")
    }
}
