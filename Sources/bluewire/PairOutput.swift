import Bluewire

/// What `bluewire pair` prints: the security level reached and the keys of the bond.
enum PairOutput {
    static func levelName(_ level: LinkSecurityLevel) -> String {
        switch level {
        case .unencrypted: "unencrypted"
        case .encryptedUnauthenticated: "encrypted, unauthenticated"
        case .authenticated: "encrypted, authenticated"
        case .secureConnectionsAuthenticated: "encrypted, authenticated, LE Secure Connections"
        }
    }

    static func passkeyText(_ value: UInt32) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }

    static func describe(_ error: HostEngineError, connectTimeout: Double? = nil) -> String {
        switch error {
        case .connectionTimeout: "no connection within \(connectTimeout.map { "\($0.formatted()) s" } ?? "the timeout") (is it advertising, connectable, at this address?)"
        case .connectionFailed(let status): "\(status)"
        case .command(let command): "\(command)"
        case .cancelled: "cancelled"
        case .security(.pairingFailed(let failure)): "\(failure)"
        case .security(let security): "\(security)"
        case .disconnected(let reason): "disconnected: \(reason)"
        default: "\(error)"
        }
    }

    /// `storedBond` is the bond file whose key encrypted the link when no pairing ran (the peer was
    /// bonded already), nil when the command paired.
    static func text(peer: BluetoothAddress, level: LinkSecurityLevel, bond: HostBond?, storedBond: String? = nil) -> String {
        var lines = [storedBond.map { "encrypted with the stored bond for \(peer) (\($0)), no pairing: \(levelName(level))" }
            ?? "paired with \(peer): \(levelName(level))"]
        if let bond {
            lines.append("key size \(bond.keySize), \(bond.secureConnections ? "LE Secure Connections" : "legacy pairing"), bonded")
            if let ltk = bond.longTermKey { lines.append("LTK \(hexString(ltk))") }
            if let ltk = bond.peerKeys.longTermKey {
                lines.append("peer LTK \(hexString(ltk)) EDIV 0x\(hex(bond.peerKeys.ediv ?? 0, width: 4)) Rand \(hexString(bond.peerKeys.rand ?? []))")
            }
            if let irk = bond.peerKeys.identityResolvingKey { lines.append("peer IRK \(hexString(irk))") }
            if let identity = bond.peerKeys.identityAddress {
                let text = identity.octets.reversed().map { hex($0, width: 2).uppercased() }.joined(separator: ":")
                lines.append("peer identity \(text)\(identity.isRandom ? "/random" : "")")
            }
            if let csrk = bond.peerKeys.signatureKey { lines.append("peer CSRK \(hexString(csrk))") }
        } else {
            lines.append("not bonded (no keys kept)")
        }
        return lines.joined(separator: "\n")
    }

    static func json(peer: BluetoothAddress, level: LinkSecurityLevel, bond: HostBond?, paired: Bool = true) -> String {
        var w = JSONWriter()
        w.beginObject()
        // As every command takes it (`/random` for a random address).
        w.field("peer", "\(peer)")
        // False when the link was encrypted with a stored bond and no pairing ran.
        w.key("paired")
        w.bool(paired)
        w.field("level", Int(level.rawValue))
        w.field("level_name", levelName(level))
        w.key("bonded")
        w.bool(bond != nil)
        if let bond {
            w.field("key_size", Int(bond.keySize))
            w.key("secure_connections")
            w.bool(bond.secureConnections)
            w.key("authenticated")
            w.bool(bond.authenticated)
            w.key("ltk")
            if let ltk = bond.longTermKey { w.string(hexString(ltk)) } else { w.null() }
            w.key("peer_irk")
            if let irk = bond.peerKeys.identityResolvingKey { w.string(hexString(irk)) } else { w.null() }
        }
        w.endObject()
        return w.text
    }
}
