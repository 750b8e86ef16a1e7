import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireSMP

// Left out of builds with BLUEWIRE_NO_SECURITY (the firmware images): the stand-ins at the end refuse.
#if !BLUEWIRE_NO_SECURITY

/// Signed writes (Core Vol 3 Part C §10.4, Part G §4.9.2, Part F §3.4.5.4): data signing for a link
/// that is not encrypted. The client signs with the CSRK it distributed when bonding and a SignCounter
/// it never reuses; the server checks the signature with the CSRK it received and accepts a counter
/// only when it is larger than the last one it accepted from that peer, so a recorded write cannot
/// be replayed. The counters live in the bond (`HostBond`, saved with it by `BondFile`).
extension HostEngine {
    /// The Signed Write Command for `value`, or nil on an encrypted link (where §4.9.2 says to send a
    /// plain Write Command instead).
    mutating func signedWriteCommand(
        _ connection: UInt16, handle: UInt16, value: [UInt8], mtu: Int
    ) -> Result<ATTPDU?, HostEngineError> {
        guard let link = links[connection] else { return .failure(.unknownConnection(connection)) }
        if link.security.level != .unencrypted { return .success(nil) }
        guard let crypto = security.configuration?.crypto else { return .failure(.security(.notConfigured)) }
        guard let key = bondKey(for: link.peer), let csrk = security.bonds[key]?.localKeys.signatureKey else {
            return .failure(.security(.notBonded))
        }
        // Opcode, handle, value and the 12-octet signature in one ATT_MTU (Part F §3.4.5.4).
        guard value.count <= mtu - 15 else {
            return .failure(.gatt(.valueTooLong(length: value.count, maximum: mtu - 15)))
        }
        let counter = security.bonds[key]?.localSignCounter ?? 0
        let message = [ATTOpcode.signedWriteCommand.rawValue, UInt8(truncatingIfNeeded: handle), UInt8(truncatingIfNeeded: handle >> 8)] + value
        let signature: [UInt8]
        do throws(SMPCryptoError) {
            signature = try crypto.attSignature(csrk: csrk, message: message, counter: counter)
        } catch {
            return .failure(.notSupported)
        }
        security.bonds[key]?.localSignCounter = counter &+ 1
        return .success(.signedWriteCommand(handle: handle, value: value[...], authenticationSignature: signature[...]))
    }

    /// A Signed Write Command from the peer: written only if a bond's CSRK verifies it and its counter
    /// is new; otherwise dropped (a command has no error response) and reported.
    mutating func receiveSignedWrite(
        _ connection: UInt16, attribute: UInt16, value: ArraySlice<UInt8>, signature: ArraySlice<UInt8>
    ) {
        guard let link = links[connection], let crypto = security.configuration?.crypto,
              let key = bondKey(for: link.peer), let bond = security.bonds[key], let csrk = bond.peerKeys.signatureKey,
              signature.count == 12 else {
            return emit(.signedWriteRefused(connection: connection, handle: attribute, reason: .noSigningKey))
        }
        let message = [ATTOpcode.signedWriteCommand.rawValue, UInt8(truncatingIfNeeded: attribute),
                       UInt8(truncatingIfNeeded: attribute >> 8)] + value
        guard crypto.verifyATTSignature(csrk: csrk, message: message, signature: Array(signature)) else {
            return emit(.signedWriteRefused(connection: connection, handle: attribute, reason: .badSignature))
        }
        let s = signature.startIndex
        let counter = UInt32(signature[s]) | UInt32(signature[s + 1]) << 8 | UInt32(signature[s + 2]) << 16
            | UInt32(signature[s + 3]) << 24
        if let last = bond.peerSignCounter, counter <= last {
            return emit(.signedWriteRefused(connection: connection, handle: attribute, reason: .replayedCounter(counter)))
        }
        security.bonds[key]?.peerSignCounter = counter
        server.verifiedSignedWrite(attribute, value, from: connection)
    }

    /// The key under which the bond for `peer` is stored (see `bond(for:)`).
    func bondKey(for peer: BluetoothAddress) -> BluetoothAddress? {
        guard let bond = bond(for: peer) else { return nil }
        return security.bonds.first { $0.value == bond }?.key
    }
}

#else

extension HostEngine {
    /// Without the Security Manager there are no signing keys.
    mutating func signedWriteCommand(
        _ connection: UInt16, handle: UInt16, value: [UInt8], mtu: Int
    ) -> Result<ATTPDU?, HostEngineError> { .failure(.notSupported) }

    mutating func receiveSignedWrite(
        _ connection: UInt16, attribute: UInt16, value: ArraySlice<UInt8>, signature: ArraySlice<UInt8>
    ) {}
}

#endif
