import ArgumentParser
import Bluewire

/// `serve --db`'s local privacy (Core Vol 3 Part C §10.7): advertise from resolvable private addresses
/// made with a local IRK (Vol 6 Part B §1.3.2.2), a new one every `--rpa-rotation` seconds, so that only
/// a central that bonded (and so holds the IRK and the identity address, distributed in pairing, Vol 3
/// Part H §3.6.4-5) can tell it is the same device. The identity address is the static random address
/// (`--own-address`, the bond file's, or a new one).
///
/// The IRK: the one the bond file's bonds distributed (their `local.irk`, Docs/BondFormat.md), so that
/// the centrals bonded by an earlier run still resolve the new addresses; else a new random one, which
/// the file keeps in the first bond made with it. When the default file is left out (it belongs to
/// another --own-address), it lasts as long as the process.
struct ServePrivacyOptions: ParsableArguments {
    @Flag(name: .long, help: "With --db: advertise from resolvable private addresses (local privacy); bonded centrals resolve them to the identity address.")
    var privacy = false

    @Option(name: .customLong("rpa-rotation"), help: ArgumentHelp(
        "With --privacy: seconds each private address is used, 1-41400 (default 900, the 15 minutes Core Vol 3 Part C Appendix A recommends).",
        valueName: "seconds"))
    var rotation: Int?

    /// T_GAP(private_addr_int) recommended (Core Vol 3 Part C Appendix A).
    static let defaultRotation = 900
    /// The longest RPA timeout a controller takes (LE Set Resolvable Private Address Timeout, Core Vol 4
    /// Part E §7.8.45: 0xA1B8 seconds, 11.5 hours); the same bound for the host's own rotation.
    static let longestRotation = 0xA1B8

    func validate() throws {
        if let rotation {
            guard privacy else { throw ValidationError("--rpa-rotation is for --privacy") }
            guard (1...Self.longestRotation).contains(rotation) else {
                throw ValidationError("invalid --rpa-rotation \(rotation): expected 1-\(Self.longestRotation) seconds")
            }
        }
    }

    /// The local IRK to use with `bonds` (those loaded from --keys): the last one a bond distributed, or a
    /// new random one (least significant octet first, as SMP carries it); `reused` says which.
    static func identityResolvingKey(from bonds: [HostBond]) -> (key: [UInt8], reused: Bool) {
        if let stored = bonds.last(where: { $0.localKeys.identityResolvingKey?.count == 16 })?.localKeys.identityResolvingKey {
            return (stored, true)
        }
        var generator = SystemRandomNumberGenerator()
        return ((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }, false)
    }

    /// `security` with privacy on: the IRK and `identity` distributed when a central bonds, and the
    /// rotation. Returns a line for the user saying where the IRK came from.
    func apply(to security: inout HostSecurityConfiguration, bonds: [HostBond], identity: BluetoothAddress, keysPath: String?) -> String {
        let (key, reused) = Self.identityResolvingKey(from: bonds)
        security.pairing.identityResolvingKey = key
        security.pairing.identityAddress = SMPAddress(isRandom: identity.type.isRandom, octets: identity.littleEndianBytes)
        let seconds = rotation ?? Self.defaultRotation
        security.privacy = PrivacyConfiguration(rotationInterval: .seconds(Int64(seconds)))
        let source = reused ? "the IRK of the bonds in \(keysPath ?? "the bond file")"
            : keysPath.map { "a new IRK, kept in \($0) with the first bond" } ?? "a new IRK for this run (the bond file is left out)"
        return "privacy: resolvable private addresses, a new one every \(seconds) s, from \(source); identity address \(identity.hexString)"
    }
}
