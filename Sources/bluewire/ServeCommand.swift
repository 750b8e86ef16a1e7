import ArgumentParser
import Bluewire
import BluewireCore
import BluewireGATT
import Foundation

/// `bluewire serve --db FILE.json`: the peripheral role from the command line. Advertises the
/// database's name and services, serves it to every central that connects (several at once), and
/// prints what they do, one line each, until SIGINT or SIGTERM.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Advertise and serve a GATT database until stopped (SIGINT/SIGTERM).",
        discussion: """
            The database is a JSON attribute table (handles kept exactly, as `analyze --export-db` writes \
            it) or the services form (handles assigned). The advertisement carries the name (--name, else \
            the database's Device Name, else "Bluewire") and the primary services' UUIDs; advertising \
            resumes after each connection and disconnection, so several centrals can connect.

            EATT (Enhanced ATT, Core Vol 3 Part G §5.3.2) is offered as BlueZ offers it: the database \
            gets a GATT service (0x1801, after its last handle) with Server Supported Features (0x2B3A, \
            EATT bit set) and Client Supported Features (0x2B29) unless it declares them itself, and \
            SPSM 0x0027 accepts Enhanced Credit Based channels, each one more ATT bearer of the same \
            database (ATT_MTU --mtu, at least 64). --no-eatt serves the file's attributes alone.

            --mtu N is the ATT_MTU offered when a central exchanges MTUs (default 517, as BlueZ and \
            bumble); the line `mtu` says what the exchange settled.

            One line per event: connected, mtu, read, write, subscribed/unsubscribed, indication, refused \
            (an ATT Error Response), disconnected, advertising; and for security: passkey, compare, \
            encryption, paired, pairing failed. A central's write to a characteristic with Notify or \
            Indicate is relayed to its subscribers.

            The database's permissions (read_encrypted, write_authenticated...) are checked against the \
            link: a central reads an encrypted value once it has paired (Insufficient Encryption before), \
            an authenticated one once it has paired with MITM protection. Pairing follows --io and the \
            other pairing options; --passkey N is the passkey serve displays or enters, --yes accepts \
            Numeric Comparison (without them those requests are refused). Bonds are loaded from the --keys \
            file at start, so a bonded central reconnects encrypted without pairing, and saved to it after \
            each bonding pairing; without --own-address serve uses the file's local address again (centrals \
            find their keys by it). The default file (in the user's data directory) is left out, neither \
            read nor written, when it holds the bonds of another address than --own-address; a --keys \
            file given explicitly is then an error.

            --privacy advertises from resolvable private addresses made with a local IRK, a new one every \
            --rpa-rotation seconds (default 900); a central that bonds gets the IRK and the identity address \
            and resolves the later ones. The IRK is the one the --keys file's bonds distributed, else a new \
            one (kept in the file with the first bond; when the file is left out, for this run only).

            --throughput serves the peer of `bluewire throughput` instead of a database. With --psm P it \
            is the peer of `bluewire throughput --mode l2cap --psm P`: it advertises, accepts LE credit based \
            channels on SPSM P and on each one sends SDUs (the channel's peer MTU, or --sdu-length octets) \
            whose first four octets are a sequence number (UInt32, little-endian, from 0), as fast as \
            credits allow, until the channel closes; one line per event (connected, channel opened, \
            channel closed with the SDUs sent, disconnected).

            Example: bluewire serve --db device.json --name Thermometer --transport tcp:127.0.0.1:9000
            """)

    @Option(name: .long, help: ArgumentHelp("GATT database (JSON attribute table or services form).", valueName: "file"))
    var db: String?

    @Flag(name: .long, help: "Serve Bluewire's throughput peer instead of a database (the peer of `bluewire throughput`).")
    var throughput = false

    @Option(name: .long, help: ArgumentHelp("With --throughput: be the source of `throughput --mode l2cap` on this SPSM (0x0080-0x00FF dynamic, or a SIG one).", valueName: "psm"))
    var psm: String?

    @Option(name: .customLong("sdu-length"), help: ArgumentHelp("With --psm: octets per SDU, 4 up to the channel's peer MTU (default: that MTU).", valueName: "n"))
    var sduLength: Int?

    @Option(name: .long, help: ArgumentHelp("Name to advertise (default: the database's Device Name).", valueName: "name"))
    var name: String?

    @Option(name: .long, help: ArgumentHelp("ATT_MTU offered to centrals in the MTU exchange, 23-517 (default 517, as BlueZ and bumble offer).", valueName: "n"))
    var mtu: Int = ServeCommand.defaultMTU

    /// 517: the longest attribute value (512, Core Vol 3 Part F §3.2.9) fits one Read Response with
    /// its opcode and Read Blob's offset to spare; what BlueZ and bumble offer, so that GATT scripts
    /// written against them see the same ATT_MTU.
    static let defaultMTU = 517

    @Flag(name: .customLong("no-eatt"), help: "Offer no Enhanced ATT: no Server/Client Supported Features added to the database, SPSM 0x0027 not registered.")
    var noEATT = false

    @Option(name: .customLong("max-connections"), help: ArgumentHelp("Stop advertising while this many centrals are connected.", valueName: "n"))
    var maxConnections: Int?

    @Flag(name: .long, help: "Print events as JSON lines.")
    var json = false

    @OptionGroup var live: LiveOptions

    /// How a central may pair (`pair`'s options, with --passkey/--yes for the user's part).
    @OptionGroup(title: "Pairing (with --db)") var pairing: ServePairingOptions

    /// Local privacy: resolvable private addresses while advertising.
    @OptionGroup(title: "Privacy (with --db)") var privacy: ServePrivacyOptions

    /// `--keys FILE` (with --db): bonds loaded at start (a bonded central encrypts without pairing) and
    /// saved after pairing; the default file as for `pair` and `gatt`, left out when it belongs to
    /// another --own-address (a script serving with its own address keeps it).
    @OptionGroup(title: "Bonds (with --db)") var keyFile: KeyFileOptions

    func validate() throws {
        // Core Vol 3 Part F §3.2.8: ATT_MTU is at least 23 on LE; 517 is the most any value needs.
        guard (23...517).contains(mtu) else { throw ValidationError("invalid MTU \(mtu): 23-517") }
        guard (db != nil) != throughput else { throw ValidationError("give either --db FILE or --throughput") }
        if throughput && (!pairing.isDefault || keyFile.keys != nil || keyFile.bonds != nil) {
            throw ValidationError("pairing options and --keys are for --db")
        }
        if throughput && privacy.privacy { throw ValidationError("--privacy is for --db") }
        if throughput && noEATT { throw ValidationError("--no-eatt is for --db") }
        if let psm {
            guard throughput else { throw ValidationError("--psm is for --throughput") }
            guard parseSPSM(psm) != nil else { throw ValidationError("invalid PSM \(psm): expected a number such as 0x0080") }
            if maxConnections != nil { throw ValidationError("--max-connections does not apply with --psm") }
        }
        if let sduLength {
            guard psm != nil else { throw ValidationError("--sdu-length is for --throughput --psm") }
            guard sduLength >= 4 else { throw ValidationError("invalid SDU length \(sduLength): at least 4 (the sequence number)") }
        }
    }

    func run() async throws {
        if throughput, let spsm = psm.flatMap(parseSPSM) {
            return await ServeChannelThroughput.run(name: name, psm: spsm, sduLength: sduLength, json: json, live: live)
        }
        guard let db else {
            return await ServeThroughput.run(name: name, maxConnections: maxConnections, mtu: UInt16(mtu), json: json, live: live)
        }
        // The database is checked before the controller is touched.
        let database = Self.loadDatabase(db)
        await ServeDatabase.run(database, ServeDatabase.Options(
            name: name, maxConnections: maxConnections, mtu: UInt16(mtu), eatt: !noEATT, json: json, live: live, pairing: pairing,
            keyFile: keyFile, privacy: privacy))
    }
}

extension ServeCommand {
    /// The GATT database file `path`, or exit 1 naming why it cannot be used.
    static func loadDatabase(_ path: String) -> GATTDatabase {
        // Worded as `decode` words it: "cannot open FILE: reason".
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { fail("cannot open \(path): \(String(cString: strerror(errno)))") }
        close(descriptor)
        do {
            return try GATTDatabase(jsonBytes: Array(try Data(contentsOf: URL(fileURLWithPath: path)))[...])
        } catch let error as GATTDatabaseFileError {
            fail("\(path): \(error)")
        } catch {
            fail("\(path): \((error as NSError).localizedDescription)")
        }
    }
}

/// What `serve` advertises: the database's name and primary services.
enum ServeAdvertising {
    /// The Device Name characteristic's value (Core Vol 3 Part C §12.1), if the database has one.
    static func deviceName(in database: GATTDatabase) -> String? {
        guard let characteristic = database.characteristics.first(where: { $0.uuid == .deviceName }),
              let value = database[handle: characteristic.valueHandle]?.cachedValue, !value.isEmpty else { return nil }
        return String(decoding: value, as: UTF8.self)
    }

    /// Primary services other than GAP and GATT (every device has those), 16-bit ones first so that
    /// as many as possible fit.
    static func primaryServices(in database: GATTDatabase) -> [BluetoothUUID] {
        var services: [BluetoothUUID] = []
        for attribute in database.attributes where attribute.type == .primaryService {
            guard let value = attribute.cachedValue, let uuid = BluetoothUUID(littleEndian: value[...]),
                  uuid != .genericAccess, uuid != .genericAttribute, !services.contains(uuid) else { continue }
            services.append(uuid)
        }
        return services.filter { $0.uint16 != nil } + services.filter { $0.uint16 == nil }
    }
}
