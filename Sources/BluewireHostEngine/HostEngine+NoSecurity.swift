import BluewireCore
import BluewireHCI
import BluewireL2CAP
import BluewireSMP

// Builds with BLUEWIRE_NO_SECURITY (the firmware images, scripts/firmware.sh) leave the Security
// Manager out: HostEngine+Security and EngineSecurity are not compiled, and these stand-ins keep the
// engine's request switch and event routing as they are. Links stay unencrypted.
#if BLUEWIRE_NO_SECURITY

/// No configuration and no bond store without the Security Manager.
struct EngineSecurity: Sendable {}

/// Only the requests the procedure queue names (`ProcedureKind.encrypt`); there are none.
struct LinkSecurity: Sendable {
    var encryptRequests: [HostRequestID] = []
}

extension HostEngine {
    mutating func pair(_ id: HostRequestID, _ handle: UInt16) { complete(id, .failure(.notSupported)) }
    mutating func encrypt(_ id: HostRequestID, _ handle: UInt16) { complete(id, .failure(.notSupported)) }
    mutating func passkeyReply(_ id: HostRequestID, _ handle: UInt16, _ passkey: UInt32?) {
        complete(id, .failure(.notSupported))
    }
    mutating func confirmReply(_ id: HostRequestID, _ handle: UInt16, _ accepted: Bool) {
        complete(id, .failure(.notSupported))
    }
    mutating func keypress(_ id: HostRequestID, _ handle: UInt16, _ type: KeypressNotificationType) {
        complete(id, .failure(.notSupported))
    }

    /// An SMP PDU (Core Vol 3 Part H §3.3): a Pairing Request (code 0x01) or Security Request (0x0B)
    /// is answered with Pairing Failed (0x05), reason Pairing Not Supported (0x05), as §3.5.5 and
    /// §3.6.7 have a device that does not pair do; anything else is dropped, as no pairing starts.
    mutating func receiveSMP(handle: UInt16, payload: ArraySlice<UInt8>) {
        guard links.index(forKey: handle) != nil, let code = payload.first, code == 0x01 || code == 0x0B else { return }
        sendL2CAP(handle: handle, channel: .smp, payload: [0x05, 0x05])
    }

    /// No encryption is ever started, so a change is not ours to track.
    mutating func encryptionChanged(handle: UInt16, status: HCIStatus, enabled: Bool, keySize: UInt8?) {}

    mutating func encryptionCommandFailed(handle: UInt16) {}

    /// LE Long Term Key Request (§7.7.65.5): there are no keys, so a negative reply (Vol 4 Part E §7.8.26).
    mutating func longTermKeyRequested(_ request: LELongTermKeyRequest) {
        enqueue(nil, .bestEffort, [.leLongTermKeyRequestNegativeReply(
            ConnectionHandleParameter(connectionHandle: request.connectionHandle))], optional: true)
    }

    /// Without bonds no private address resolves.
    mutating func resolveIdentity(_ address: BluetoothAddress) -> BluetoothAddress? { nil }
    func currentAddress(of peer: BluetoothAddress) -> BluetoothAddress { peer }

    /// No IRK, no private address: advertising uses the static random address.
    mutating func privateAdvertisingAddress() -> BluetoothAddress? { nil }
    var privacyDeadline: MonotonicInstant? { nil }
    mutating func firePrivacyRotation() {}
    var advertisingAddressReplaced: Bool { false }

    /// No bonds, no resolving list: nothing is written to the controller's.
    mutating func writeResolvingListWhenIdle() {}
    mutating func resolvingListControllerReset() {}
    mutating func resolvingListSizeAnswered(_ result: Result<CommandResponse, CommandError>) {}
    mutating func resolvingListWritten() {}
    mutating func resolvingListWriteFailed() {}
    mutating func controllerResolvedIdentity(_ address: BluetoothAddress) -> BluetoothAddress? { nil }
    func resolvingListTarget(_ peer: BluetoothAddress) -> BluetoothAddress? { nil }

    var securityDeadline: MonotonicInstant? { nil }
    mutating func fireSecurityTimers() {}
    mutating func securityDisconnected(_ link: EngineLink, reason: HCIStatus) {}
}

#endif  // BLUEWIRE_NO_SECURITY
