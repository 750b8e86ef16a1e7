import ArgumentParser
import Bluewire
import Foundation

/// `bluewire pair ADDRESS`: connects as central, pairs (LE Secure Connections or legacy, Core Vol 3
/// Part H), waits for the link to be encrypted, prints the security level and the keys, and
/// disconnects. Runs on `EngineHost`, the host engine's shell (the Security Manager lives in the
/// engine); see Docs/CommandLine.md.
struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Connect to a peripheral, pair, encrypt the link, print the keys, disconnect.",
        discussion: """
            The IO capabilities (--io) decide the method with the peripheral's (Core Vol 3 Part H §2.3.5.1): \
            Just Works, Passkey Entry (a passkey shown here, or typed here / given with --passkey) or Numeric \
            Comparison (confirmed on stdin, or with --yes). Exit status 0 once the link is encrypted, 1 if \
            pairing fails (the reason by name), 130 on SIGINT/SIGTERM; the link is disconnected on every path.
            """
    )

    @Argument(help: ArgumentHelp("The peripheral: AA:BB:CC:DD:EE:FF or AA:BB:CC:DD:EE:FF/random.", valueName: "address"))
    var address: String

    @OptionGroup var live: LiveOptions

    @Option(name: .long, help: ArgumentHelp(
        "display-only, display-yes-no, keyboard-only, no-input-no-output or keyboard-display.", valueName: "capability"))
    var io: String = "keyboard-display"

    @Flag(name: .long, help: "Require man-in-the-middle protection (an authenticated key).")
    var mitm = false

    @Flag(name: .long, help: "Use legacy pairing only (no LE Secure Connections).")
    var legacy = false

    @Flag(name: .customLong("sc-only"), help: "Refuse anything but LE Secure Connections.")
    var secureConnectionsOnly = false

    @Flag(name: .customLong("no-bond"), help: "Do not ask for bonding (no keys distributed).")
    var noBond = false

    @Option(name: .long, help: ArgumentHelp("Answer a passkey request with this number (0-999999).", valueName: "passkey"))
    var passkey: UInt32?

    @Flag(name: .long, help: "Accept numeric comparison without asking.")
    var yes = false

    @Flag(name: .long, help: "Print the result as one JSON object.")
    var json = false

    @Option(name: .customLong("connect-timeout"), help: ArgumentHelp("Seconds to wait for the connection.", valueName: "seconds"))
    var connectTimeout: Double = 10

    /// `--keys FILE`: bonds found there are encrypted with their stored key; a new bond is saved there.
    @OptionGroup var keyFile: KeyFileOptions

    static let capabilities: [String: IOCapability] = [
        "display-only": .displayOnly, "display-yes-no": .displayYesNo, "keyboard-only": .keyboardOnly,
        "no-input-no-output": .noInputNoOutput, "keyboard-display": .keyboardDisplay,
    ]

    var peer: BluetoothAddress {
        get throws { try parsePeerAddress(address) }
    }

    func validate() throws {
        _ = try peer
        guard Self.capabilities[io] != nil else {
            throw ValidationError("unknown --io \(io): expected one of \(Self.capabilities.keys.sorted().joined(separator: ", "))")
        }
        if let passkey, passkey > 999_999 { throw ValidationError("--passkey must be between 0 and 999999") }
        if legacy && secureConnectionsOnly { throw ValidationError("--legacy and --sc-only exclude each other") }
        guard connectTimeout > 0 && connectTimeout <= 3600 else { throw ValidationError("--connect-timeout must be between 0 and 3600 seconds") }
    }

    var pairing: PairingConfiguration {
        var configuration = PairingConfiguration(ioCapability: Self.capabilities[io] ?? .keyboardDisplay)
        configuration.mitmRequired = mitm
        configuration.secureConnections = !legacy
        configuration.secureConnectionsOnly = secureConnectionsOnly
        configuration.bonding = !noBond
        return configuration
    }

    func run() async throws {
        let peer = try self.peer
        let security = HostSecurityConfiguration(pairing: pairing, crypto: SMPCrypto(SwiftCryptoSMP()))
        let keysPath = keyFile.path
        let contents: KeyFile.Contents
        do {
            contents = try KeyFile.load(keysPath)
        } catch {
            fail("\(error)")
        }
        let stored = contents.bonds
        var live = self.live
        // Peers find their keys by our address: a bond file is one local identity, and brings the
        // address its bonds were made with.
        if let storedAddress = contents.localAddress {
            if let own = live.address {
                if let parsed = BluetoothAddress(parsing: own), parsed.value != storedAddress.value, !stored.isEmpty {
                    fail("bond file \(keysPath) holds the bonds of local address \(KeyFile.addressText(storedAddress)), "
                        + "not --own-address \(own): give another --keys file for another identity")
                }
            } else {
                live.address = storedAddress.hexString
            }
        }
        let (host, session, link, interrupts) = await connectWithEngine(live: live, peer: peer, connectTimeout: connectTimeout) { host in
            await host.configureSecurity(security)
            await host.addBonds(stored)
            // Set before the connection, so no prompt is missed.
            await host.setPairingDelegate(TerminalPairingDelegate(passkey: passkey, acceptsComparison: yes, peerRole: "the peripheral"))
        }
        defer { interrupts.cancel() }
        // Bonded already: encrypt with the stored key (Core Vol 3 Part H §2.4.4), no pairing.
        let reuse = stored.contains { $0.peer.value == link.peer.value }
        let outcome = await host.perform(reuse ? .encrypt(connection: link.handle) : .pair(connection: link.handle))
        let bond = await host.bonds.first { $0.peer == link.peer }
        await session.finish()
        if case .success(.secured) = outcome, !reuse, !noBond, bond != nil {
            do {
                // Other peers' bonds in the file are kept; this peer's is replaced.
                let others = stored.filter { $0.peer.value != link.peer.value }
                let new = await host.bonds.filter { $0.peer.value == link.peer.value }
                try KeyFile.save(others + new, localAddress: await host.localAddress, to: keysPath)
            } catch {
                fail("\(error)")
            }
        }
        switch outcome {
        case .success(.secured(let level)):
            if reuse && !json { print("encrypted with the stored bond (\(keysPath))") }
            print(json ? PairOutput.json(peer: peer, level: level, bond: bond) : PairOutput.text(peer: peer, level: level, bond: bond))
        case .failure(let error) where reuse:
            fail("encrypting with the stored bond for \(peer) failed: \(PairOutput.describe(error)) "
                + "(if the peripheral lost its keys, `bluewire bonds remove \(KeyFile.addressText(peer)) --keys \(keysPath)` to pair again)")
        case .success(let other):
            fail("pairing with \(peer): unexpected \(other)")
        case .failure(let error):
            fail("pairing with \(peer) failed: \(PairOutput.describe(error))")
        }
    }
}
