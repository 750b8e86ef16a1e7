import BluewireCore

/// Pairing Failed reasons by the names Core Vol 3 Part H §3.5.5 (table 3.7) gives them, so that a
/// user reads "DHKey Check Failed" and can look it up, not a Swift case name.
extension PairingFailedReason: CustomStringConvertible {
    /// The reason as the specification names it ("Confirm Value Failed"); a reserved value by its code.
    public var name: String {
        switch self {
        case .passkeyEntryFailed: "Passkey Entry Failed"
        case .oobNotAvailable: "OOB Not Available"
        case .authenticationRequirements: "Authentication Requirements"
        case .confirmValueFailed: "Confirm Value Failed"
        case .pairingNotSupported: "Pairing Not Supported"
        case .encryptionKeySize: "Encryption Key Size"
        case .commandNotSupported: "Command Not Supported"
        case .unspecifiedReason: "Unspecified Reason"
        case .repeatedAttempts: "Repeated Attempts"
        case .invalidParameters: "Invalid Parameters"
        case .dhKeyCheckFailed: "DHKey Check Failed"
        case .numericComparisonFailed: "Numeric Comparison Failed"
        case .brEDRPairingInProgress: "BR/EDR Pairing In Progress"
        case .crossTransportKeyDerivationNotAllowed: "Cross-transport Key Derivation/Generation Not Allowed"
        case .keyRejected: "Key Rejected"
        case .busy: "Busy"
        case .reserved(let code): "Reserved (0x" + hexByteUpper(code) + ")"
        }
    }

    public var description: String { name }
}

/// Which side ended a pairing, with the reason by name.
extension PairingFailure: CustomStringConvertible {
    public var description: String {
        switch self {
        case .local(let reason): reason.name + " (sent by this side)"
        case .remote(let reason): reason.name + " (sent by the peer)"
        case .timeout: "no answer within 30 s (SMP timeout)"
        }
    }
}
