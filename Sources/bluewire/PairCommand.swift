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

    /// --io, --mitm, --legacy, --sc-only, --no-bond, --passkey, --yes.
    @OptionGroup var pairing: PairingOptions

    @Flag(name: .long, help: "Print the result as one JSON object.")
    var json = false

    @Option(name: .customLong("connect-timeout"), help: ArgumentHelp("Seconds to wait for the connection.", valueName: "seconds"))
    var connectTimeout: Double = 10

    /// `--keys FILE`: bonds found there are encrypted with their stored key; a new bond is saved there.
    @OptionGroup var keyFile: KeyFileOptions

    var peer: BluetoothAddress {
        get throws { try parsePeerAddress(address) }
    }

    func validate() throws {
        _ = try peer
        guard connectTimeout > 0 && connectTimeout <= 3600 else { throw ValidationError("--connect-timeout must be between 0 and 3600 seconds") }
    }

    func run() async throws {
        let peer = try self.peer
        let security = pairing.security
        var live = self.live
        // Peers find their keys by our address: a bond file is one local identity, and brings the
        // address its bonds were made with.
        let identity = KeyFileIdentity.open(keyFile, live: &live, conflict: .refuse)
        let keysPath = identity.path
        let stored = identity.bonds
        let (host, session, link, interrupts) = await connectWithEngine(live: live, peer: peer, connectTimeout: connectTimeout) { host in
            await host.configureSecurity(security)
            await host.addBonds(stored)
            // Set before the connection, so no prompt is missed.
            await host.setPairingDelegate(pairing.delegate(peerRole: "the peripheral"))
        }
        defer { interrupts.cancel() }
        // Bonded already: encrypt with the stored key (Core Vol 3 Part H §2.4.4), no pairing.
        let reuse = identity.hasBond(with: link.peer)
        let outcome = await host.perform(reuse ? .encrypt(connection: link.handle) : .pair(connection: link.handle))
        let bond = await host.bonds.first { $0.peer == link.peer }
        await session.finish()
        if case .success(.secured) = outcome, !reuse, !pairing.noBond, bond != nil {
            do {
                // Other peers' bonds in the file are kept; this peer's is replaced.
                try await identity.save(from: host, peer: link.peer)
            } catch {
                fail("\(error)")
            }
        }
        switch outcome {
        case .success(.secured(let level)):
            print(json ? PairOutput.json(peer: peer, level: level, bond: bond, paired: !reuse)
                  : PairOutput.text(peer: peer, level: level, bond: bond, storedBond: reuse ? keysPath : nil))
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
