import BluewireCore
import BluewireSMP

// Left out of builds with BLUEWIRE_NO_SECURITY (the firmware images); HostEngine+NoSecurity stands in.
#if !BLUEWIRE_NO_SECURITY

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
