import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireSMP

// The GATT client's authorizer is the Security Manager: both must be in the build. Builds without either
// (the firmware images, scripts/firmware.sh) get the stand-ins at the end of this file.
#if !BLUEWIRE_NO_CENTRAL && !BLUEWIRE_NO_SECURITY

/// Security raised on demand for the GATT client (Core Vol 3 Part C §10.3.2): a request refused with
/// Insufficient Encryption or Insufficient Authentication makes the engine encrypt the link with a bonded
/// key good enough for it, or pair (with MITM protection when authentication was asked for), and send the
/// request again once the link is encrypted. Once only: a second refusal ends the operation with it.
extension HostEngine {
    /// The head operation of the link was refused with `code`. True when security is being raised for it
    /// (the operation stays at the head of the queue and starts again on Encryption Change).
    mutating func raiseSecurityForClient(_ handle: UInt16, _ code: ATTErrorCode) -> Bool {
        guard code == .insufficientEncryption || code == .insufficientAuthentication,
              let configuration = pairingConfiguration, let link = links[handle],
              !link.security.timedOut, var operation = link.clientOperations.first,
              !operation.securityRetried, !pairingBackedOff(link.peer) else { return false }
        let needsAuthentication = code == .insufficientAuthentication
        // Already as secure as pairing could make it; or authentication asked of a device without input
        // or output, whose pairings are all Just Works (Vol 3 Part H §2.3.5.1): asking again cannot help.
        if link.security.level >= .authenticated { return false }
        if needsAuthentication, configuration.pairing.ioCapability == .noInputNoOutput { return false }
        operation.securityRetried = true
        operation.awaitingSecurity = true
        links[handle]?.clientOperations[0] = operation
        // A pairing or an encryption already under way ends in the Encryption Change this waits for.
        if link.security.isPairing || link.security.pending != nil || !link.security.encryptRequests.isEmpty {
            return true
        }
        if link.role == .central, link.security.level == .unencrypted, let bond = bond(for: link.peer),
           bond.authenticated || !needsAuthentication, let key = bond.centralKey {
            startEncryption(handle, key.longTermKey, ediv: key.ediv, rand: key.rand,
                            PendingEncryption(level: bond.level, keySize: bond.keySize), id: nil)
            return true
        }
        var pairing = configuration.pairing
        if needsAuthentication { pairing.mitmRequired = true }
        let session = newSession(link, HostSecurityConfiguration(pairing: pairing, crypto: configuration.crypto))
        // The central pairs; a peripheral asks its central to (Security Request, Vol 3 Part H §3.6.7).
        drive(handle, session, link.role == .central ? .start : .securityRequest)
        return true
    }

    /// The link is encrypted now: the operation waiting for it starts again from its first request.
    mutating func clientSecurityRaised(_ handle: UInt16) {
        guard var operation = links[handle]?.clientOperations.first, operation.awaitingSecurity else { return }
        operation.awaitingSecurity = false
        operation.procedure = operation.original
        operation.request = nil
        links[handle]?.clientOperations[0] = operation
        startClientOperation(handle)
    }

    /// Pairing or encryption failed: the operation waiting for it fails with that reason.
    mutating func clientSecurityFailed(_ handle: UInt16, _ error: HostEngineError) {
        guard let operation = links[handle]?.clientOperations.first, operation.awaitingSecurity else { return }
        finishClientOperation(handle, .failure(error))
        startClientOperation(handle)
    }
}

#else

extension HostEngine {
    /// Without the Security Manager (or without the client), a refusal ends the operation.
    mutating func raiseSecurityForClient(_ handle: UInt16, _ code: ATTErrorCode) -> Bool { false }
    mutating func clientSecurityRaised(_ handle: UInt16) {}
    mutating func clientSecurityFailed(_ handle: UInt16, _ error: HostEngineError) {}
}

#endif
