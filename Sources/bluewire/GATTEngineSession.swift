import ArgumentParser
import Bluewire
import Foundation

/// How `gatt read|write|subscribe` pair when a peripheral refuses a request for lack of security
/// (Insufficient Encryption or Authentication, Core Vol 3 Part C §10.3.2): the bond file and the
/// pairing options of `pair`.
struct GATTSecurityOptions: ParsableArguments {
    /// `--keys FILE`: bonds there encrypt the link when the peer asks; a new bond is saved there.
    @OptionGroup var keyFile: KeyFileOptions

    /// --io, --mitm, --legacy, --sc-only, --no-bond, --passkey, --yes, as `pair` takes them.
    @OptionGroup var pairing: PairingOptions
}

extension GATTPeerOptions {
    /// Starts an `EngineHost` (ATT_MTU 517 offered, no Client Supported Features written), connects,
    /// exchanges MTUs and discovers the whole database, runs `body`, then disconnects and closes the
    /// host (flushing `--capture`) whatever happened: success, error, timeout, SIGINT/SIGTERM (status
    /// 130; `body` may take signals over through `interrupts`). A request the peer refuses for security makes the engine encrypt with
    /// the bond from `--keys` or pair (answering passkeys and comparisons as `pair` does) and send it
    /// again; a new bond is written to the file. Failures end the process with one line on stderr
    /// naming the peer, and status 1.
    func withEnginePeripheral(
        security: GATTSecurityOptions,
        _ body: (EngineGATTClient, [DiscoveredService], CommandInterrupts) async throws -> Void
    ) async {
        let peer: BluetoothAddress
        do {
            peer = try self.peer
        } catch {
            fail("\(error)")
        }
        var live = self.live
        // The default file is left out for another --own-address; one given with --keys is refused
        // then, as `pair` does.
        let explicit = security.keyFile.keys != nil || security.keyFile.bonds != nil
        let identity = KeyFileIdentity.open(security.keyFile, live: &live, conflict: explicit ? .refuse : .leaveOut)
        let pairing = security.pairing
        let configuration = pairing.security
        let stored = identity.bonds
        let (host, session, link, interrupts) = await connectWithEngine(
            live: live, peer: peer, connectTimeout: connectTimeout, replayable: true,
            configure: { host in
                await host.configureSecurity(configuration)
                await host.addBonds(stored)
                await host.setPairingDelegate(pairing.delegate(peerRole: "the peripheral"))
            },
            adjust: { configuration in
                configuration.preferredMTU = 517
                // A command that reads must not write to the peer's database: no Client Supported
                // Features declaration (it would also show in `gatt dump`); these commands use
                // neither EATT nor Multiple Handle Value Notifications.
                configuration.clientFeatures = []
            })
        defer { interrupts.cancel() }
        let client = EngineGATTClient(host: host, link: link, keysPath: identity.path, bondedBefore: identity.hasBond(with: link.peer))
        var failure: String?
        do {
            // A server may refuse the exchange (Request Not Supported); 23 octets then. A timeout
            // or the link's end fails the command here.
            _ = try await client.exchangeMTU()
            let services = try await client.discoverAll()
            try await body(client, services, interrupts)
        } catch let error as CLIError {
            failure = error.message
        } catch {
            failure = "\(peer): \(error)"
        }
        await session.finish()
        await saveNewBond(identity, host: host, peer: link.peer)
        if let failure { fail(failure) }
    }

    /// A pairing during the command left a bond the file does not hold yet: written there (or, when
    /// the file was left out for another `--own-address`, said so).
    func saveNewBond(_ identity: KeyFileIdentity, host: EngineHost, peer: BluetoothAddress) async {
        await identity.saveNewBond(from: host, peer: peer)
    }
}
