import BluewireCore
import BluewireSMP

// Left out of builds with BLUEWIRE_NO_SECURITY (the firmware images); HostEngine+NoSecurity stands in.
#if !BLUEWIRE_NO_SECURITY

/// Local privacy while advertising (Core Vol 3 Part C §10.7, Vol 6 Part B §1.3.2.2): the engine advertises
/// from a resolvable private address made from its IRK, and makes a new one every `rotationInterval`
/// (T_GAP(private_addr_int), 15 minutes recommended by Vol 3 Part C Appendix A), so that only a peer that
/// bonded and holds the IRK can tell it is the same device. Host-based: the engine computes the address
/// with `ah` and sets it (LE Set Random Address on a legacy controller, LE Set Advertising Set Random
/// Address on an extended one), stopping advertising around the change as §7.8.4 requires.
///
/// Scanning and creating connections keep the static random address on an extended controller; on a
/// legacy controller, whose one random address serves every role, they use the private address too.
public struct PrivacyConfiguration: Hashable, Sendable {
    /// How long one private address is used.
    public var rotationInterval: TimeSpan

    public init(rotationInterval: TimeSpan = .seconds(15 * 60)) {
        self.rotationInterval = rotationInterval
    }
}

/// The private address in use and when it is replaced.
struct LocalPrivacy: Hashable, Sendable {
    var address: BluetoothAddress?
    var rotatesAt: MonotonicInstant?
}

extension HostEngine {
    /// The address to advertise from: a resolvable private address with privacy on (made now if there is
    /// none), else nil (the static random address).
    mutating func privateAdvertisingAddress() -> BluetoothAddress? {
        guard let configuration = security.configuration, let privacy = configuration.privacy,
              let irk = configuration.pairing.identityResolvingKey, irk.count == 16 else { return nil }
        if let address = security.privacy.address { return address }
        var crypto = configuration.crypto
        var prand = crypto.randomBytes(3)
        security.configuration?.crypto = crypto
        // The two most significant bits of prand are 0b01; its random part is neither all 0 nor all 1.
        prand[0] = (prand[0] & 0x3F) | 0x40
        if prand[1] == 0 && prand[2] == 0 && prand[0] == 0x40 { prand[2] = 1 }
        if prand[1] == 0xFF && prand[2] == 0xFF && prand[0] == 0x7F { prand[2] = 0xFE }
        // ah takes the IRK most significant octet first; it is kept as SMP distributes it (§3.6.4).
        guard let hash = try? crypto.ah(irk.reversed(), prand), hash.count == 3 else { return nil }
        var value: UInt64 = 0
        for octet in prand + hash { value = value << 8 | UInt64(octet) }
        let address = BluetoothAddress(value: value, type: .random)
        security.privacy.address = address
        security.privacy.rotatesAt = now + privacy.rotationInterval
        return address
    }

    /// When the private address is due for replacement.
    var privacyDeadline: MonotonicInstant? { security.privacy.rotatesAt }

    /// The private address's time is up: a new one, and advertising restarted from it. A connection
    /// attempt under way (the controller refuses a new address while initiating) puts it off a second.
    mutating func firePrivacyRotation() {
        guard let due = security.privacy.rotatesAt, due <= now else { return }
        guard pendingConnection == nil else {
            security.privacy.rotatesAt = now + .seconds(1)
            return
        }
        security.privacy = LocalPrivacy()
        guard let advertisement = advertising.advertisement else { return }
        if advertising.isEnabled || advertising.enabling {
            startAdvertising(nil, advertisement)
        }
        // Paused while a central is connected: `resumeAdvertising` configures the new address.
    }

    /// Whether resuming must configure advertising again: its address was replaced meanwhile.
    var advertisingAddressReplaced: Bool {
        guard security.configuration?.privacy != nil else { return false }
        return advertising.commands?.ownAddress != security.privacy.address
    }
}

#endif  // !BLUEWIRE_NO_SECURITY
