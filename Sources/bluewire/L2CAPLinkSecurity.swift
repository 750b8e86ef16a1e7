import Bluewire
import Foundation

/// Securing `l2cap connect`'s link before its channel: encryption with the bond file's key, or a
/// pairing after a refusal for security; each reported (stderr, or a JSON event line), each failure
/// ending the command with status 1 after the link is released.
struct L2CAPLinkSecurity {
    let host: EngineHost
    let session: EngineLinkSession
    let link: HostConnection
    let identity: KeyFileIdentity
    let json: Bool

    /// Encrypts with the stored bond; a peripheral that lost its keys fails it (PIN or Key Missing).
    func encryptWithBond() async {
        switch await host.perform(.encrypt(connection: link.handle)) {
        case .success(.secured(let level)):
            report("encrypted", level: level, detail: "with the stored bond (\(identity.path))")
        case .success(let other):
            await session.finish()
            fail("encrypting with the stored bond for \(link.peer): unexpected \(other)")
        case .failure(let error):
            await session.finish()
            fail("encrypting with the stored bond for \(link.peer) failed: \(PairOutput.describe(error)) "
                + "(if the peripheral lost its keys, `bluewire bonds remove \(KeyFile.addressText(link.peer)) --keys \(identity.path)` to pair again)")
        }
    }

    /// Pairs (the channel was refused for `refusal`) and saves a new bond to the file at once, so that
    /// a channel that runs for hours, or ends with SIGINT, does not lose it.
    func pair(after refusal: String) async {
        if !json { note("\(refusal); pairing") }
        switch await host.perform(.pair(connection: link.handle)) {
        case .success(.secured(let level)):
            let bonded = await host.bonds.contains { $0.peer.value == link.peer.value }
            report("paired", level: level, detail: bonded ? "bonded" : "not bonded")
            await identity.saveNewBond(from: host, peer: link.peer)
        case .success(let other):
            await session.finish()
            fail("\(refusal); pairing: unexpected \(other)")
        case .failure(let error):
            await session.finish()
            fail("\(refusal); pairing failed: \(Self.describe(error))")
        }
    }

    /// A pairing failure says which side ended it, as `gatt` words it.
    static func describe(_ error: HostEngineError) -> String {
        if case .security(.pairingFailed(let failure)) = error { return GATTFailure.describe(failure) }
        return PairOutput.describe(error)
    }

    private func report(_ event: String, level: LinkSecurityLevel, detail: String) {
        if json {
            say(JSONLine.make(["event": event, "level": Int(level.rawValue), "level_name": PairOutput.levelName(level)]))
        } else {
            note("\(event): \(PairOutput.levelName(level)), \(detail)")
        }
    }
}
