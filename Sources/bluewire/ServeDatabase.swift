import Bluewire
import Foundation
import Synchronization

/// `bluewire serve --db FILE` on an `EngineHost`: the engine serves the database (checking each
/// attribute's permissions against the link's security), answers pairing as the options say, keeps
/// advertising while centrals may still connect (`--max-connections`), and reports what happens;
/// this shell prints it, relays writes to subscribers and saves bonds.
enum ServeDatabase {
    struct Options {
        var name: String?
        var maxConnections: Int?
        /// `--mtu`: the ATT_MTU offered in exchanges and used by the server.
        var mtu: UInt16 = UInt16(ServeCommand.defaultMTU)
        /// Offer Enhanced ATT (`ServeEATT`); false with `--no-eatt`.
        var eatt = true
        var json: Bool
        var live: LiveOptions
        var pairing: ServePairingOptions
        /// `--keys FILE` (or the default file): bonds loaded at start, written after each bonding pairing.
        var keyFile: KeyFileOptions
        /// `--privacy`, `--rpa-rotation`.
        var privacy = ServePrivacyOptions()
    }

    static func run(_ file: GATTDatabase, _ options: Options) async {
        let output = ServeOutput(json: options.json)
        var database = file
        var eatt: ServeEATT.Declaration?
        if options.eatt {
            if let declared = ServeEATT.declare(in: file) {
                database = declared.database
                eatt = declared.declaration
            } else {
                output.note("EATT not offered: the database's GATT service (0x1801) is not its last service, so Server Supported Features cannot be added without moving handles")
            }
        }
        var live = options.live
        // Peers find their keys by our address: the file brings the address its bonds were made with.
        // A default file of another --own-address is left out; one the user named is an error.
        let explicit = options.keyFile.keys != nil || options.keyFile.bonds != nil
        let identity = KeyFileIdentity.open(options.keyFile, live: &live, conflict: explicit ? .refuse : .leaveOut)
        let stored = identity.bonds
        let stop = ServeSignals.stopRequests()
        let host: EngineHost
        do {
            host = try await live.startEngineHost(connectionTimeout: .seconds(10)) { $0.preferredMTU = options.mtu }
        } catch {
            fail("\(error)")
        }
        var security = HostSecurityConfiguration(
            pairing: options.pairing.configuration, crypto: SMPCrypto(SwiftCryptoSMP()), bondStore: options.pairing.bondStore)
        if options.privacy.privacy {
            output.note(options.privacy.apply(to: &security, bonds: stored, identity: await host.localAddress, keysPath: identity.inUse ? identity.path : nil))
        }
        await host.configureSecurity(security)
        // Nobody sits at a server: the options answer (a passkey request without --passkey and a
        // comparison without --yes are refused at once rather than left to the 30 s SMP timeout).
        await host.setPairingDelegate(PairingAnswers(passkey: options.pairing.passkey, acceptsComparison: options.pairing.yes))
        await host.addBonds(stored)
        await host.setDatabase(database)
        // Subscribed before advertising, so the first central's connection is not missed.
        let events = await host.events()
        await host.bringUpForCommand()
        // Registered before advertising, so the first central finds SPSM 0x0027; said after the
        // advertising line, which stays the first.
        var eattRegistration: String?
        if let eatt, eatt.offersEATT { eattRegistration = await ServeEATT.register(on: host, mtu: Int(options.mtu)) }
        let advertisement: HostAdvertisement
        do {
            // Laid out for legacy PDUs (name shortened into the data, complete in the scan response).
            let layout = try Advertisement(name: options.name ?? ServeAdvertising.deviceName(in: database) ?? "Bluewire",
                                           services: ServeAdvertising.primaryServices(in: database))
            advertisement = HostAdvertisement(
                data: layout.data, scanResponse: layout.scanResponse, advertisesWhileConnected: true,
                maximumConnections: options.maxConnections, prefersLegacyPDUs: true)
        } catch {
            await host.close()
            fail("\(error)")
        }
        if case .failure(let error) = await host.perform(.startAdvertising(advertisement)) {
            await host.close()
            fail("cannot advertise: \(error)")
        }
        if let layout = await host.advertisingLayout {
            output.advertising(name: advertisement, address: await host.localAddress, layout: layout, attributes: database.attributes.count)
        }
        if let eatt, eatt.offersEATT {
            if let failure = eattRegistration { output.note(failure) } else { output.eatt(eatt, mtu: Int(options.mtu)) }
        }

        let centrals = ServeCentrals()
        let writer = ServeEngineLoop.writer(for: identity, output: output)
        let loop = ServeEngineLoop(host: host, output: output, centrals: centrals, pairing: options.pairing, keys: identity, writer: writer)
        // Serve until a signal, or until the host ends (its events finish when the transport closes).
        let signal = await ServeSignals.serve(until: stop) { await loop.run(events) }
        guard let signal else {
            // Why, when the transport says (a replay's mismatch names the record and both packets).
            let why = await host.transportFailure.flatMap { $0 == .closed ? nil : ": \($0)" } ?? ""
            await host.close()
            await writer?.flush()
            fail("the controller connection ended" + why)
        }
        if await shutDown(host, centrals: centrals.handles, within: .seconds(3)) == false {
            output.note("disconnecting timed out")
        }
        // A save asked for is on the disk before the process ends.
        await writer?.flush()
        output.stopped(signal: signal)
    }

    /// Leaves the controller as found: advertising off, every central disconnected, then the host
    /// closed; false if the disconnections did not complete within `timeout` (closed anyway).
    static func shutDown(_ host: EngineHost, centrals: [UInt16], within timeout: Duration) async -> Bool {
        _ = await host.perform(.stopAdvertising)
        let completed = await finishes(within: timeout) {
            await withTaskGroup(of: Void.self) { disconnections in
                for handle in centrals {
                    disconnections.addTask { _ = await host.perform(.disconnect(handle: handle, reason: .remoteUserTerminatedConnection)) }
                }
            }
        }
        await host.close()
        return completed
    }
}

/// The centrals connected, by handle (their addresses for the disconnected line).
final class ServeCentrals: Sendable {
    let peers = Mutex<[UInt16: BluetoothAddress]>([:])
    var handles: [UInt16] { peers.withLock { $0.keys.sorted() } }
}
