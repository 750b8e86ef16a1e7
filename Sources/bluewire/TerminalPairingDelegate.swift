import Bluewire
import Foundation

/// The user of a pairing command on a terminal (`PairingDelegate`): passkeys to type on the peer and
/// values to compare are shown on stderr; the passkey the peer shows comes from `--passkey` or a line
/// of stdin, the comparison's answer from `--yes` or a y/N line of stdin. Stdout stays for results.
struct TerminalPairingDelegate: PairingDelegate {
    /// `--passkey N`: typed for the user when this device enters the passkey.
    let passkey: UInt32?
    /// `--yes`: comparisons are confirmed without asking.
    let acceptsComparison: Bool
    /// Who the other device is, as the prompts name it ("the peripheral", "the central").
    let peerRole: String

    func displayPasskey(_ passkey: UInt32, connection: UInt16) async {
        Self.say("passkey: \(PairOutput.passkeyText(passkey)) (type it on \(peerRole))\n")
    }

    func enterPasskey(connection: UInt16) async -> UInt32? {
        if let passkey { return passkey }
        Self.say("passkey shown by \(peerRole): ")
        return readLine().flatMap { UInt32($0.trimmingCharacters(in: .whitespaces)) }
    }

    func confirm(_ value: UInt32, connection: UInt16) async -> Bool {
        Self.say("confirm \(peerRole) shows \(PairOutput.passkeyText(value))")
        if acceptsComparison {
            Self.say(" (--yes)\n")
            return true
        }
        Self.say(" [y/N]: ")
        return readLine()?.lowercased().hasPrefix("y") ?? false
    }

    private static func say(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
