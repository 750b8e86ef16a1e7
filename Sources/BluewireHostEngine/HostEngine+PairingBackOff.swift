import BluewireCore
import BluewireSMP

// Left out of builds with BLUEWIRE_NO_SECURITY (the firmware images).
#if !BLUEWIRE_NO_SECURITY

/// The waiting interval after a failed pairing (Core Vol 3 Part H §2.3.6, "Repeated Attempts"): when
/// pairing with a peer fails its authentication (a wrong confirm value, DHKey check, passkey or a rejected
/// comparison), the engine neither starts nor answers a new pairing with that peer until the interval
/// has passed, answering Pairing Failed with Repeated Attempts instead. Each further failure doubles the
/// interval (from 2 s up to 64 s); a successful pairing forgets the failures. This is what stops a
/// peer from guessing a passkey by trying again at once.
struct PairingBackOff: Hashable, Sendable {
    /// Failed attempts in a row.
    var failures: Int
    /// No new pairing with the peer before this.
    var until: MonotonicInstant

    static let firstInterval = TimeSpan.seconds(2)
    static let longestInterval = TimeSpan.seconds(64)

    /// The interval after `failures` failures in a row: 2 s, 4 s, 8 s ... 64 s.
    static func interval(after failures: Int) -> TimeSpan {
        let doubled = firstInterval.microseconds << Int64(min(max(failures - 1, 0), 5))
        return TimeSpan(microseconds: min(doubled, longestInterval.microseconds))
    }
}

extension PairingFailure {
    /// A failure of the authentication itself, the kind §2.3.6 makes a device wait after.
    var failedAuthentication: Bool {
        switch self {
        case .local(let reason), .remote(let reason):
            switch reason {
            case .confirmValueFailed, .dhKeyCheckFailed, .passkeyEntryFailed, .numericComparisonFailed: return true
            default: return false
            }
        case .timeout:
            return false
        }
    }
}

extension HostEngine {
    /// True while pairing with `peer` must wait (§2.3.6).
    func pairingBackedOff(_ peer: BluetoothAddress) -> Bool {
        guard let backOff = security.backOffs[peer] else { return false }
        return now < backOff.until
    }

    /// Records a failure (or, on success, forgets the earlier ones).
    mutating func recordPairingOutcome(_ peer: BluetoothAddress, failure: PairingFailure?) {
        guard let failure else {
            security.backOffs[peer] = nil
            return
        }
        guard failure.failedAuthentication else { return }
        let failures = (security.backOffs[peer]?.failures ?? 0) + 1
        security.backOffs[peer] = PairingBackOff(failures: failures, until: now + PairingBackOff.interval(after: failures))
    }
}

#endif  // !BLUEWIRE_NO_SECURITY
