import ArgumentParser
import Bluewire
import Foundation

/// How this side pairs (Core Vol 3 Part H §2.3): the options `pair` and the commands that pair on
/// demand (`gatt`) share, and the user's part of a pairing (`TerminalPairingDelegate`).
struct PairingOptions: ParsableArguments {
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

    static let capabilities: [String: IOCapability] = [
        "display-only": .displayOnly, "display-yes-no": .displayYesNo, "keyboard-only": .keyboardOnly,
        "no-input-no-output": .noInputNoOutput, "keyboard-display": .keyboardDisplay,
    ]

    func validate() throws {
        try Self.validate(io: io, passkey: passkey, legacy: legacy, secureConnectionsOnly: secureConnectionsOnly)
    }

    /// The checks `pair`'s options and `serve`'s (ServePairingOptions) share.
    static func validate(io: String, passkey: UInt32?, legacy: Bool, secureConnectionsOnly: Bool) throws {
        guard capabilities[io] != nil else {
            throw ValidationError("unknown --io \(io): expected one of \(capabilities.keys.sorted().joined(separator: ", "))")
        }
        if let passkey, passkey > 999_999 { throw ValidationError("--passkey must be between 0 and 999999") }
        if legacy && secureConnectionsOnly { throw ValidationError("--legacy and --sc-only exclude each other") }
    }

    var configuration: PairingConfiguration {
        Self.configuration(io: io, mitm: mitm, legacy: legacy, secureConnectionsOnly: secureConnectionsOnly, noBond: noBond)
    }

    /// The Security Manager's configuration (Core Vol 3 Part H §3.5.1) for these option values.
    static func configuration(io: String, mitm: Bool, legacy: Bool, secureConnectionsOnly: Bool, noBond: Bool) -> PairingConfiguration {
        var configuration = PairingConfiguration(ioCapability: capabilities[io] ?? .keyboardDisplay)
        configuration.mitmRequired = mitm
        configuration.secureConnections = !legacy
        configuration.secureConnectionsOnly = secureConnectionsOnly
        configuration.bonding = !noBond
        return configuration
    }

    /// The engine's Security Manager configuration for these options (swift-crypto's primitives).
    var security: HostSecurityConfiguration {
        HostSecurityConfiguration(pairing: configuration, crypto: SMPCrypto(SwiftCryptoSMP()))
    }

    /// The user's part of a pairing on a terminal: passkeys and comparisons shown on stderr,
    /// answered from `--passkey` / `--yes` or a line of stdin.
    func delegate(peerRole: String) -> TerminalPairingDelegate {
        TerminalPairingDelegate(passkey: passkey, acceptsComparison: yes, peerRole: peerRole)
    }
}
