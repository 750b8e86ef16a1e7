import BluewireCore
import BluewireHCI
import BluewireSMP

// Left out of builds with BLUEWIRE_NO_SECURITY (the firmware images); HostEngine+NoSecurity stands in.
#if !BLUEWIRE_NO_SECURITY

/// What the engine knows of the controller's resolving list (Core Vol 4 Part E §7.8.38–44; Vol 6 Part B
/// §6.2): the bonded peers' IRKs with their identity addresses, with which a controller resolves their
/// resolvable private addresses itself and reports the identity (Peer_Address_Type 0x02/0x03).
struct ControllerResolvingList: Sendable {
    /// From LE Read Resolving List Size (§7.8.41); nil until answered.
    var size: UInt8?
    var sizeAsked = false
    /// The identity addresses in the controller's list now (public or random type).
    var loaded: [BluetoothAddress] = []
    /// Address resolution is enabled in the controller (§7.8.44).
    var enabled = false
    /// The bonds changed since the list was last written: it is written again when the controller is idle.
    var stale = false
    /// What the write under way puts in the list.
    var writing: [BluetoothAddress]?
    /// The controller has reported an address it resolved (type 0x02/0x03): it really resolves, so a
    /// listed peer is reached by its identity (bumble's controller takes the list and resolves nothing).
    var controllerResolves = false
}

extension HostEngine {
    /// Whether the engine keeps the controller's resolving list: the application did not turn it off,
    /// the controller lists the four commands (§6.27) and security is configured (there are bonds to load).
    var usesControllerResolvingList: Bool {
        configuration.controllerAddressResolution && phase == .running && security.configuration != nil
            && controller?.supportsResolvingList == true
    }

    /// The bonds changed (a new bond, one removed, a new configuration): the list is written again.
    mutating func resolvingListChanged() {
        security.resolvingList.stale = true
        pumpProcedures()
    }

    /// Bring-up finished: HCI Reset emptied the controller's list and turned resolution off.
    mutating func resolvingListControllerReset() {
        security.resolvingList = ControllerResolvingList()
        security.resolvingList.stale = true
    }

    /// The entries for the list: every bond with an IRK and an identity address (§3.6.4–3.6.5), one per
    /// identity, at most `limit`.
    func resolvingListEntries(limit: Int) -> [LEAddDeviceToResolvingList] {
        // All zero without a local IRK (§7.8.38): the controller then uses the identity towards the peer.
        let localIRK = security.configuration?.pairing.identityResolvingKey ?? []
        var entries: [LEAddDeviceToResolvingList] = []
        for bond in bonds where entries.count < limit {
            guard let irk = bond.peerKeys.identityResolvingKey, irk.count == 16,
                  let identity = bond.peerKeys.identityAddress?.bluetoothAddress,
                  !entries.contains(where: { $0.peerIdentityAddress == identity }) else { continue }
            entries.append(LEAddDeviceToResolvingList(
                peerIdentityAddress: identity, peerIRK: irk,
                localIRK: localIRK.count == 16 ? localIRK : [UInt8](repeating: 0, count: 16)))
        }
        return entries
    }

    /// Writes the list when it is stale and the controller is idle. Adding or clearing entries is
    /// disallowed while resolution is enabled and advertising, scanning or initiating (§7.8.38, §7.8.40),
    /// and enabling resolution while any of them runs (§7.8.44): the write waits until none runs and no
    /// procedure is queued (a start asked for later runs after it). Until then the host resolves the new
    /// bond's addresses with its IRK, as without a resolving list.
    mutating func writeResolvingListWhenIdle() {
        guard security.resolvingList.stale, security.resolvingList.writing == nil, procedures.isEmpty,
              usesControllerResolvingList else { return }
        guard let size = security.resolvingList.size else {
            // Nothing is sent before there is a bond to load: a session without bonds looks as before.
            guard !security.resolvingList.sizeAsked, !resolvingListEntries(limit: 1).isEmpty else { return }
            security.resolvingList.sizeAsked = true
            // Allowed at any time; the answer comes back through `resolvingListSizeAnswered`.
            return enqueue(nil, .readResolvingListSize, [.leReadResolvingListSize], optional: true)
        }
        guard scan == nil, pendingConnection == nil, !advertising.isEnabled, !advertising.enabling else { return }
        security.resolvingList.stale = false
        let entries = resolvingListEntries(limit: Int(size))
        let identities = entries.map { $0.peerIdentityAddress }
        let list = security.resolvingList
        let enable = !identities.isEmpty
        guard identities != list.loaded || enable != list.enabled else { return }
        var commands: [HCICommand] = [.leClearResolvingList]
        commands += entries.map { .leAddDeviceToResolvingList($0) }
        if enable != list.enabled {
            commands.append(.leSetAddressResolutionEnable(LESetAddressResolutionEnable(enable: enable)))
        }
        security.resolvingList.writing = identities
        enqueue(nil, .writeResolvingList, commands)
    }

    /// LE Read Resolving List Size answered (or failed: no list is used then).
    mutating func resolvingListSizeAnswered(_ result: Result<CommandResponse, CommandError>) {
        guard case .success(let response) = result,
              let size = try? response.returnParameters(LEReadResolvingListSizeReturn.self, opcode: .leReadResolvingListSize),
              size.status.isSuccess else {
            security.resolvingList.size = 0
            return
        }
        security.resolvingList.size = size.resolvingListSize
    }

    /// The write finished: the controller holds `writing` and resolves with it.
    mutating func resolvingListWritten() {
        guard let written = security.resolvingList.writing else { return }
        security.resolvingList.writing = nil
        security.resolvingList.loaded = written
        security.resolvingList.enabled = !written.isEmpty
    }

    /// The controller refused part of the write: its list is unknown, so nothing is reached through it
    /// (the host still resolves); the next change of bonds writes it again.
    mutating func resolvingListWriteFailed() {
        security.resolvingList.writing = nil
        security.resolvingList.loaded = []
    }

    /// An address the controller resolved (Peer_Address_Type 0x02/0x03 in an advertising report or a
    /// connection complete event, §7.7.65.2, §7.7.65.10): the peer's identity address as public or
    /// random, remembered as where that peer is reached (by its identity, the controller resolving
    /// whichever private address it uses then). Nil for an address the controller did not resolve.
    mutating func controllerResolvedIdentity(_ address: BluetoothAddress) -> BluetoothAddress? {
        guard let identity = address.resolvedIdentity else { return nil }
        security.resolvingList.controllerResolves = true
        security.currentAddresses[identity] = address
        return identity
    }

    /// Where to connect to reach `peer` through the resolving list: its identity with type 0x02/0x03 (Core
    /// Vol 4 Part E §7.8.12, Peer_Address_Type), when it is listed and the controller has been seen to resolve.
    func resolvingListTarget(_ peer: BluetoothAddress) -> BluetoothAddress? {
        let identity = peer.resolvedIdentity ?? peer
        let list = security.resolvingList
        guard list.controllerResolves, list.enabled, list.loaded.contains(identity) else { return nil }
        return BluetoothAddress(value: identity.value, type: identity.type.isRandom ? .randomIdentity : .publicIdentity)
    }
}

#endif  // !BLUEWIRE_NO_SECURITY

extension BluetoothAddress {
    /// For an address a controller reports as resolved with its resolving list (type 0x02 public identity,
    /// 0x03 random identity), the identity address with the plain type; nil for any other.
    var resolvedIdentity: BluetoothAddress? {
        switch type {
        case .publicIdentity: BluetoothAddress(value: value, type: .public)
        case .randomIdentity: BluetoothAddress(value: value, type: .random)
        default: nil
        }
    }
}
