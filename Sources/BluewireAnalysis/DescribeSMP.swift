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
        } else if let layout = layouts[code] {
            ParameterDecoder.decode(layout.fields, data, into: &d, layer: "smp")
        } else if !data.isEmpty {
            d.add("data", hexString(data.prefix(64)))
        }
    }
}
