import BluewireCore

/// Security Manager Protocol commands on CID 0x0006 (LE) and 0x0007 (BR/EDR)
/// (Core Vol 3 Part H §3.5–§3.6): every field by name, keys and random values as hex.
enum SMPDescription {
    struct Layout: Sendable {
        let name: String
        let fields: [Parameter]
    }

    static let pairingFeatures: [Parameter] = [
        .u8("io_capability"), .u8("oob_data_flag"), .x8("auth_req"), .u8("max_encryption_key_size"),
        .x8("initiator_key_distribution"), .x8("responder_key_distribution"),
    ]

    static let layouts: [UInt8: Layout] = [
        0x01: Layout(name: "Pairing Request", fields: pairingFeatures),
        0x02: Layout(name: "Pairing Response", fields: pairingFeatures),
        0x03: Layout(name: "Pairing Confirm", fields: [.key("confirm_value")]),
        0x04: Layout(name: "Pairing Random", fields: [.key("random_value")]),
        0x05: Layout(name: "Pairing Failed", fields: [.u8("reason")]),
        0x06: Layout(name: "Encryption Information", fields: [.key("long_term_key")]),
        0x07: Layout(name: "Central Identification", fields: [.x16("ediv"), .x64("rand")]),
        0x08: Layout(name: "Identity Information", fields: [.key("identity_resolving_key")]),
        0x09: Layout(name: "Identity Address Information", fields: [.addrType(), .bdAddr]),
        0x0A: Layout(name: "Signing Information", fields: [.key("signature_key")]),
        0x0B: Layout(name: "Security Request", fields: [.x8("auth_req")]),
        0x0C: Layout(name: "Pairing Public Key", fields: [.key("public_key_x", 32), .key("public_key_y", 32)]),
        0x0D: Layout(name: "Pairing DHKey Check", fields: [.key("dhkey_check")]),
        0x0E: Layout(name: "Pairing Keypress Notification", fields: [.u8("notification_type")]),
    ]

    static func name(_ code: UInt8) -> String {
        layouts[code]?.name ?? "Unknown (0x" + hex(code, width: 2) + ")"
    }

    /// Pairing Failed reasons (§3.5.5).
    static func reasonName(_ reason: UInt8) -> String? {
        switch reason {
        case 0x01: "Passkey Entry Failed"
        case 0x02: "OOB Not Available"
        case 0x03: "Authentication Requirements"
        case 0x04: "Confirm Value Failed"
        case 0x05: "Pairing Not Supported"
        case 0x06: "Encryption Key Size"
        case 0x07: "Command Not Supported"
        case 0x08: "Unspecified Reason"
        case 0x09: "Repeated Attempts"
        case 0x0A: "Invalid Parameters"
        case 0x0B: "DHKey Check Failed"
        case 0x0C: "Numeric Comparison Failed"
        case 0x0D: "BR/EDR pairing in progress"
        case 0x0E: "Cross-transport Key Derivation/Generation not allowed"
        case 0x0F: "Key Rejected"
        case 0x10: "Busy"
        default: nil
        }
    }

    /// IO capability names (§3.5.1 table 3.4).
    static func ioCapabilityName(_ value: UInt8) -> String {
        let names = ["DisplayOnly", "DisplayYesNo", "KeyboardOnly", "NoInputNoOutput", "KeyboardDisplay"]
        return (Int(value) < names.count ? names[Int(value)] : "Reserved") + " (0x" + hex(value, width: 2) + ")"
    }

    /// AuthReq (§3.5.1 figure 3.3): the value and the flags set, e.g. `0x2d (bonding, MITM, SC, CT2)`.
    static func authRequirementsText(_ value: UInt8) -> String {
        var flags: [String] = []
        switch value & 0x03 {
        case 0x01: flags.append("bonding")
        case 0x00: flags.append("no bonding")
        default: flags.append("reserved bonding flags")
        }
        if value & 0x04 != 0 { flags.append("MITM") }
        if value & 0x08 != 0 { flags.append("SC") }
        if value & 0x10 != 0 { flags.append("keypress") }
        if value & 0x20 != 0 { flags.append("CT2") }
        if value & 0xC0 != 0 { flags.append("reserved 0x" + hex(value & 0xC0, width: 2)) }
        return "0x" + hex(value, width: 2) + " (" + flags.joined(separator: ", ") + ")"
    }

    /// Key distribution (§3.6.1 figure 3.11), e.g. `0x07 (EncKey, IdKey, SignKey)`.
    static func keyDistributionText(_ value: UInt8) -> String {
        var keys: [String] = []
        if value & 0x01 != 0 { keys.append("EncKey") }
        if value & 0x02 != 0 { keys.append("IdKey") }
        if value & 0x04 != 0 { keys.append("SignKey") }
        if value & 0x08 != 0 { keys.append("LinkKey") }
        if value & 0xF0 != 0 { keys.append("reserved 0x" + hex(value & 0xF0, width: 2)) }
        return "0x" + hex(value, width: 2) + " (" + (keys.isEmpty ? "none" : keys.joined(separator: ", ")) + ")"
    }

    /// Pairing Request / Response (§3.5.1, §3.5.2): each field with its meaning by name.
    static func describeFeatures(_ data: ArraySlice<UInt8>, into d: inout PacketDescription) {
        let s = data.startIndex
        d.add("io_capability", ioCapabilityName(data[s]))
        d.add("oob_data_flag", data[s + 1] == 0x01 ? "present (0x01)" : data[s + 1] == 0 ? "not present (0x00)" : "reserved (0x" + hex(data[s + 1], width: 2) + ")")
        d.add("auth_req", authRequirementsText(data[s + 2]))
        d.add("max_encryption_key_size", Int(data[s + 3]))
        d.add("initiator_key_distribution", keyDistributionText(data[s + 4]))
        d.add("responder_key_distribution", keyDistributionText(data[s + 5]))
        if data.count > 6 { d.add("trailing", hexString(data.dropFirst(6).prefix(64))) }
    }

    static func describe(_ payload: ArraySlice<UInt8>, into d: inout PacketDescription) {
        guard let code = payload.first else {
            d.say("SMP (empty)")
            return
        }
        d.say("SMP " + name(code))
        d.addHex("smp_code", code, digits: 2, shown: false)
        let data = payload.dropFirst()
        if code == 0x05, let reason = data.first {
            d.add("reason", (reasonName(reason) ?? "Reserved") + " (0x" + hex(reason, width: 2) + ")")
            if data.count > 1 { d.add("trailing", hexString(data.dropFirst().prefix(64))) }
        } else if (code == 0x01 || code == 0x02) && data.count >= 6 {
            describeFeatures(data, into: &d)
        } else if code == 0x0B && data.count >= 1 {
            d.add("auth_req", authRequirementsText(data[data.startIndex]))
            if data.count > 1 { d.add("trailing", hexString(data.dropFirst().prefix(64))) }
        } else if let layout = layouts[code] {
            ParameterDecoder.decode(layout.fields, data, into: &d, layer: "smp")
        } else if !data.isEmpty {
            d.add("data", hexString(data.prefix(64)))
        }
    }
}
