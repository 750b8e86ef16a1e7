import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireL2CAP
import BluewireSMP

// Left out of builds with BLUEWIRE_NO_SECURITY (the firmware images); HostEngine+NoSecurity stands in.
#if !BLUEWIRE_NO_SECURITY

/// The Security Manager in the engine (Core Vol 3 Part H): one `PairingSession` per link on the SMP fixed
/// channel (CID 0x0006), the HCI encryption commands and events around it (Vol 4 Part E §7.8.24–26,
/// §7.7.8, §7.7.39, §7.7.65.5) and an in-memory bond store.
///
/// The central starts pairing with `.pair` (Pairing Request, §3.5.1), or when the peripheral asks with a
/// Security Request (§3.6.7); once phase 2 produced the STK or LTK it sends LE Enable Encryption. The
/// peripheral answers a Pairing Request, and the LE Long Term Key Request with the session's key, a bonded
/// key, or a negative reply. After Encryption Change the keys are distributed (§3.6.1) and, when both sides
/// asked to bond, stored: the next connection to that peer is encrypted with them (`.encrypt`) without pairing.
extension HostEngine {
    /// Pair and bond from now on with this configuration (without it, pairing is refused with Pairing Not
    /// Supported, §3.5.5). On Linux the crypto is swift-crypto's:
    ///
    /// ```swift
    /// engine.configureSecurity(HostSecurityConfiguration(
    ///     pairing: PairingConfiguration(ioCapability: .keyboardDisplay, mitmRequired: true),
    ///     crypto: SMPCrypto(SwiftCryptoSMP())))
    /// engine.perform(.pair(connection: handle), id: HostRequestID(7), now: clock.now())
    /// // .event(.passkeyRequest(connection: handle)) → .passkeyReply(connection: handle, passkey: typed)
    /// // .event(.encryptionChanged(...)), .event(.paired(...)), .completed(7, .success(.secured(level)))
    /// ```
    public mutating func configureSecurity(_ configuration: HostSecurityConfiguration) {
        let unmasked = security.configuration?.crypto.usesController == true
        security.configuration = configuration
        // Configured after bring-up: the controller's crypto events must be unmasked now (bring-up unmasks
        // them when the configuration comes first).
        if configuration.crypto.usesController, !unmasked, phase == .running || phase == .starting {
            enqueue(nil, .bestEffort, [.leSetEventMask(ControllerBringUp.leEventMaskWithCrypto)], optional: true)
        }
        resolvingListChanged()
    }

    /// The bonds stored (an application persists them and hands them back with `addBond` after a restart).
    public var bonds: [HostBond] { security.bonds.values.sorted { $0.peer < $1.peer } }

    /// Stores a bond: later connections to its peer can be encrypted with its keys.
    /// With a controller that has a resolving list, the bond's IRK goes into it (HostEngine+ResolvingList).
    /// A bond restored this way is never dropped for the store's limit (`BondStorePolicy`) here; it
    /// counts toward it when a later pairing needs room, in the order of its `lastUsed`.
    public mutating func addBond(_ bond: HostBond) {
        security.bonds[bond.peer] = bond
        security.bondUses = max(security.bondUses, bond.lastUsed)
        resolvingListChanged()
    }

    /// Forgets the bond with a peer (and takes its IRK out of the controller's resolving list).
    public mutating func removeBond(peer: BluetoothAddress) {
        security.bonds[peer] = nil
        resolvingListChanged()
    }

    /// The security level of a link now (Core Vol 3 Part C §10.2.1) and the key size, nil without such a link.
    public func security(connection: UInt16) -> (level: LinkSecurityLevel, keySize: UInt8)? {
        guard let link = links[connection] else { return nil }
        return (link.security.level, link.security.keySize)
    }

    /// The association model (Core Vol 3 Part H §2.3.5.1) of the last pairing that succeeded on a link:
    /// what an application tells its user about the key it now has (a Just Works key is unauthenticated,
    /// §2.3.5.2). Nil when no pairing succeeded on the link (it was encrypted with a bond, or not at all).
    public func pairingMethod(connection: UInt16) -> PairingMethod? {
        links[connection]?.security.pairedMethod
    }

    // MARK: requests

    /// Central: send a Pairing Request. Peripheral: send a Security Request and wait for the central.
    mutating func pair(_ id: HostRequestID, _ handle: UInt16) {
        guard security.configuration != nil else { return complete(id, .failure(.security(.notConfigured))) }
        guard let link = links[handle] else { return complete(id, .failure(.unknownConnection(handle))) }
        guard let configuration = pairingConfiguration else {
            return complete(id, .failure(.security(.pairingFailed(.local(.pairingNotSupported)))))
        }
        guard !link.security.timedOut else { return complete(id, .failure(.security(.pairingFailed(.timeout)))) }
        guard !link.security.isPairing else { return complete(id, .failure(.security(.pairingInProgress))) }
        guard !pairingBackedOff(link.peer) else {
            return complete(id, .failure(.security(.pairingFailed(.local(.repeatedAttempts)))))
        }
        links[handle]?.security.pairRequests.append(id)
        drive(handle, newSession(link, configuration), link.role == .central ? .start : .securityRequest)
    }

    /// Central: encrypt the link with the bond's key (§2.4.4); completes on Encryption Change.
    mutating func encrypt(_ id: HostRequestID, _ handle: UInt16) {
        guard let link = links[handle] else { return complete(id, .failure(.unknownConnection(handle))) }
        guard link.role == .central, let bond = bond(for: link.peer), let key = bond.centralKey else {
            return complete(id, .failure(.security(.notBonded)))
        }
        links[handle]?.security.encryptRequests.append(id)
        startEncryption(handle, key.longTermKey, ediv: key.ediv, rand: key.rand,
                        PendingEncryption(level: bond.level, keySize: bond.keySize, bond: bond.peer), id: id)
    }

    /// The user's passkey (nil: the user refused, the pairing fails with Passkey Entry Failed, §3.5.5).
    mutating func passkeyReply(_ id: HostRequestID, _ handle: UInt16, _ passkey: UInt32?) {
        guard links[handle]?.security.isPairing == true, let session = links[handle]?.security.session else {
            return complete(id, .failure(.security(.noPairingInProgress)))
        }
        complete(id, .success(.done))
        // A value above 999999 is what the session fails with Passkey Entry Failed.
        drive(handle, session, .passkey(passkey ?? 1_000_000))
    }

    /// The user's Numeric Comparison answer (§2.3.5.6.2).
    mutating func confirmReply(_ id: HostRequestID, _ handle: UInt16, _ accepted: Bool) {
        guard links[handle]?.security.isPairing == true, let session = links[handle]?.security.session else {
            return complete(id, .failure(.security(.noPairingInProgress)))
        }
        complete(id, .success(.done))
        drive(handle, session, .numericComparison(accepted))
    }

    /// A key the user pressed while entering the passkey: a Keypress Notification when both sides agreed
    /// to them (§3.5.8, §2.3.5.6.3); the session sends nothing otherwise.
    mutating func keypress(_ id: HostRequestID, _ handle: UInt16, _ type: KeypressNotificationType) {
        guard links[handle]?.security.isPairing == true, let session = links[handle]?.security.session else {
            return complete(id, .failure(.security(.noPairingInProgress)))
        }
        complete(id, .success(.done))
        drive(handle, session, .keypress(type))
    }

    // MARK: SMP PDUs

    /// A PDU on the SMP fixed channel (§3.3). Without a configuration, or with the controller's crypto on a
    /// controller that lacks it: Pairing Not Supported (§3.5.5).
    mutating func receiveSMP(handle: UInt16, payload: ArraySlice<UInt8>) {
        guard let configuration = pairingConfiguration else {
            if payload.first == 0x01 || payload.first == 0x0B {
                sendL2CAP(handle: handle, channel: .smp, payload: [0x05, 0x05])
            }
            return
        }
        guard let link = links[handle], !link.security.timedOut else { return }  // §3.4: nothing after a timeout
        // A Pairing Request or Security Request while the waiting interval of §2.3.6 runs: Repeated Attempts.
        if payload.first == 0x01 || payload.first == 0x0B, !link.security.isPairing, pairingBackedOff(link.peer) {
            return sendL2CAP(handle: handle, channel: .smp, payload: [0x05, 0x09])
        }
        var session = link.security.session ?? newSession(link, configuration)
        if session.isFinished, link.security.cryptoWaiting == nil { session = newSession(link, configuration) }
        drive(handle, session, .pdu(Array(payload)))
    }

    func newSession(_ link: EngineLink, _ configuration: HostSecurityConfiguration) -> PairingSession<SMPCrypto> {
        let local = (link.localAddress ?? self.configuration.randomAddress).smpAddress
        let peer = link.peer.smpAddress
        return PairingSession(
            role: link.role == .central ? .initiator : .responder, configuration: configuration.pairing,
            crypto: configuration.crypto,
            initiatorAddress: link.role == .central ? local : peer, responderAddress: link.role == .central ? peer : local)
    }

    /// Acts on what the session decided.
    mutating func run(_ actions: [SMPAction], handle: UInt16) {
        for action in actions {
            guard links.index(forKey: handle) != nil else { return }
            switch action {
            case .send(let pdu):
                sendL2CAP(handle: handle, channel: .smp, payload: pdu.encoded())
            case .startEncryption(let key, let ediv, let rand):
                startEncryption(handle, key, ediv: ediv, rand: littleEndianUInt64(rand), sessionEncryption(handle), id: nil)
            case .longTermKeyReply(let key):
                let pending = sessionEncryption(handle)
                links[handle]?.security.pending = pending
                enqueue(nil, .bestEffort, [.leLongTermKeyRequestReply(
                    LELongTermKeyRequestReply(connectionHandle: handle, longTermKey: key))], optional: true)
            case .longTermKeyNegativeReply:
                enqueue(nil, .bestEffort, [.leLongTermKeyRequestNegativeReply(
                    ConnectionHandleParameter(connectionHandle: handle))], optional: true)
            case .displayPasskey(let passkey):
                emit(.passkeyDisplay(connection: handle, passkey: passkey))
            case .requestPasskey:
                emit(.passkeyRequest(connection: handle))
            case .keypress(let type):
                emit(.keypress(connection: handle, type: type))
            case .confirmNumericComparison(let value):
                emit(.numericComparison(connection: handle, value: value))
            case .securityRequested(let auth):
                securityRequested(handle, auth)
            case .paired(let result):
                paired(handle, result)
            case .failed(let failure):
                pairingFailed(handle, failure)
            }
        }
    }

    /// What encrypting with the running session's key gives.
    func sessionEncryption(_ handle: UInt16) -> PendingEncryption? {
        guard let session = links[handle]?.security.session else { return nil }
        return PendingEncryption(
            level: .of(authenticated: session.negotiatedMethod.isAuthenticated,
                       secureConnections: session.usesSecureConnections, keySize: session.negotiatedKeySize),
            keySize: session.negotiatedKeySize)
    }

    mutating func startEncryption(
        _ handle: UInt16, _ key: [UInt8], ediv: UInt16, rand: UInt64, _ pending: PendingEncryption?, id: HostRequestID?
    ) {
        links[handle]?.security.pending = pending
        let command = LEEnableEncryption(connectionHandle: handle, randomNumber: rand, encryptedDiversifier: ediv, longTermKey: key)
        enqueue(ControllerProcedure(id: id, kind: .encrypt(handle), commands: [
            ProcedureCommand(command: .leEnableEncryption(command), optional: false),
        ]))
    }

    /// Central: the peripheral sent a Security Request (§3.6.7). With a bond good enough for what it asks,
    /// encrypt with the bond's key; otherwise pair.
    mutating func securityRequested(_ handle: UInt16, _ auth: AuthRequirements) {
        guard let link = links[handle], link.security.level == .unencrypted, link.security.pending == nil else { return }
        if let bond = bond(for: link.peer), bond.authenticated || !auth.mitm, let key = bond.centralKey {
            return startEncryption(handle, key.longTermKey, ediv: key.ediv, rand: key.rand,
                                   PendingEncryption(level: bond.level, keySize: bond.keySize, bond: bond.peer), id: nil)
        }
        guard let session = link.security.session, session.isIdle else { return }
        drive(handle, session, .start)
    }

    mutating func paired(_ handle: UInt16, _ result: PairingResult) {
        guard let link = links[handle] else { return }
        let bond = HostBond(
            peer: link.peer, secureConnections: result.secureConnections, authenticated: result.authenticated,
            keySize: result.keySize, longTermKey: result.longTermKey, localKeys: result.localKeys,
            peerKeys: result.peerKeys)
        recordPairingOutcome(link.peer, failure: nil)
        links[handle]?.security.pairedMethod = result.method
        let bonded = result.bonded && store(bond)
        // The peer's identity, when it paired from a private address (§3.6.5): shown on the link from now on,
        // and where `.connect(identity)` goes while the peer keeps this address.
        if let identity = result.peerKeys.identityAddress?.bluetoothAddress, identity != link.peer {
            links[handle]?.identity = identity
            if bonded, link.peer.randomKind == .resolvablePrivate { security.currentAddresses[identity] = link.peer }
        }
        emit(.paired(connection: handle, keys: bond, bonded: bonded, method: result.method))
        let requests = link.security.pairRequests
        links[handle]?.security.pairRequests = []
        for id in requests { complete(id, .success(.secured(link.security.level))) }
    }

    mutating func pairingFailed(_ handle: UInt16, _ failure: PairingFailure) {
        guard let link = links[handle] else { return }
        if failure == .timeout { links[handle]?.security.timedOut = true }
        recordPairingOutcome(link.peer, failure: failure)
        emit(.pairingFailed(connection: handle, failure))
        links[handle]?.security.pairRequests = []
        for id in link.security.pairRequests { complete(id, .failure(.security(.pairingFailed(failure)))) }
        clientSecurityFailed(handle, .security(.pairingFailed(failure)))
    }

    // MARK: HCI events

    /// Encryption Change (§7.7.8) or Encryption Key Refresh Complete (§7.7.39, `enabled` true).
    mutating func encryptionChanged(handle: UInt16, status: HCIStatus, enabled: Bool, keySize: UInt8?) {
        guard let link = links[handle] else { return }
        let requests = link.security.encryptRequests
        links[handle]?.security.encryptRequests = []
        let pending = link.security.pending
        links[handle]?.security.pending = nil
        guard status.isSuccess, enabled else {
            if status.isSuccess, link.security.level != .unencrypted {
                // Encryption switched off (not done on LE, but the event can say so, §7.7.8).
                links[handle]?.security.level = .unencrypted
                links[handle]?.security.keySize = 0
                setLinkSecurity(.open, connection: handle)
                server.setSecurityLevel(.none, for: handle)
                emit(.encryptionChanged(connection: handle, level: .unencrypted, keySize: 0))
            }
            for id in requests { complete(id, .failure(.security(.encryptionFailed(status)))) }
            feedEncryption(handle, enabled: false)
            clientSecurityFailed(handle, .security(.encryptionFailed(status)))
            return
        }
        let level = pending?.level ?? max(link.security.level, .encryptedUnauthenticated)
        let size = keySize ?? pending?.keySize ?? link.security.keySize
        if let bond = pending?.bond { bondUsed(bond) }
        links[handle]?.security.level = level
        links[handle]?.security.keySize = size
        // Credit based channel requests are checked against this (Core Vol 3 Part A §4.22, §4.25).
        setLinkSecurity(L2CAPLinkSecurity(
            isEncrypted: true, isAuthenticated: level >= .authenticated, keySize: Int(size), hasKey: true), connection: handle)
        // So are the GATT server's attribute permissions (Core Vol 3 Part C §10.3.1): read/write
        // encrypted or authenticated attributes answer Insufficient Encryption/Authentication below.
        server.setSecurityLevel(level >= .authenticated ? .authenticated : .encrypted, for: handle)
        emit(.encryptionChanged(connection: handle, level: level, keySize: size))
        for id in requests { complete(id, .success(.secured(level))) }
        if !link.security.isPairing, !link.security.pairRequests.isEmpty {
            // A peripheral's Security Request answered with a bonded key: no pairing, but secured.
            links[handle]?.security.pairRequests = []
            for id in link.security.pairRequests { complete(id, .success(.secured(level))) }
        }
        feedEncryption(handle, enabled: true)
        // A GATT request refused for security goes out again (Core Vol 3 Part C §10.3.2).
        clientSecurityRaised(handle)
    }

    /// Tells a session waiting for encryption how it went: key distribution starts, or the pairing fails.
    mutating func feedEncryption(_ handle: UInt16, enabled: Bool) {
        guard let session = links[handle]?.security.session, session.isWaitingForEncryption else { return }
        drive(handle, session, .encryption(enabled: enabled))
    }

    /// LE Enable Encryption was refused: the `.encrypt` request or the pairing fails.
    mutating func encryptionCommandFailed(handle: UInt16) {
        links[handle]?.security.pending = nil
        feedEncryption(handle, enabled: false)
    }

    /// LE Long Term Key Request (§7.7.65.5): the running pairing's key, else a bonded one, else a negative
    /// reply (the central then sees Encryption Change with PIN or Key Missing).
    mutating func longTermKeyRequested(_ request: LELongTermKeyRequest) {
        let handle = request.connectionHandle
        guard let link = links[handle] else { return }
        if let session = link.security.session, !session.isFinished, !session.isIdle {
            let rand = (0..<8).map { UInt8(truncatingIfNeeded: request.randomNumber >> UInt64(8 * $0)) }
            return drive(handle, session, .longTermKeyRequest(ediv: request.encryptedDiversifier, rand: rand))
        }
        if let bond = bond(for: link.peer),
            let key = bond.peripheralKey(ediv: request.encryptedDiversifier, rand: request.randomNumber)
        {
            links[handle]?.security.pending = PendingEncryption(level: bond.level, keySize: bond.keySize, bond: bond.peer)
            return enqueue(nil, .bestEffort, [.leLongTermKeyRequestReply(
                LELongTermKeyRequestReply(connectionHandle: handle, longTermKey: key))], optional: true)
        }
        enqueue(nil, .bestEffort, [.leLongTermKeyRequestNegativeReply(
            ConnectionHandleParameter(connectionHandle: handle))], optional: true)
    }

    // MARK: time and teardown

    /// The earliest SMP timer (§3.4) of any link.
    var securityDeadline: MonotonicInstant? {
        var earliest: MonotonicInstant?
        for index in links.indices {
            guard let deadline = links.values[index].security.session?.deadline else { continue }
            if earliest.map({ deadline < $0 }) ?? true { earliest = deadline }
        }
        return earliest
    }

    /// Fires every SMP timer due: the pairing fails and SMP stops on that link.
    mutating func fireSecurityTimers() {
        guard let due = securityDeadline, due <= now else { return }
        for handle in links.sortedKeys {
            guard var session = links[handle]?.security.session, let deadline = session.deadline, deadline <= now else {
                continue
            }
            let actions = session.timerFired(now: now)
            links[handle]?.security.session = session
            // An input still waiting for the controller's crypto is over with the pairing.
            dropCryptoWaiting(handle)
            run(actions, handle: handle)
        }
    }

    /// The link went down: its security requests fail with the reason.
    mutating func securityDisconnected(_ link: EngineLink, reason: HCIStatus) {
        for id in link.security.pairRequests + link.security.encryptRequests {
            complete(id, .failure(.disconnected(reason)))
        }
    }
}

#endif  // !BLUEWIRE_NO_SECURITY
