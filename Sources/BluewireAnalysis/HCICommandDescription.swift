import BluewireCore

/// Descriptions of HCI command packets (Core Vol 4 Part E §5.4.1, §7): the command's name and every
/// parameter by name, from the layouts in `CommandTable`. Vendor commands (OGF 0x3F) show their OGF,
/// OCF and parameters as hex.
enum HCICommandDescription {
    static func describe(_ packet: ArraySlice<UInt8>, into d: inout PacketDescription) {
        let s = packet.startIndex
        guard packet.count >= 3 else {
            if packet.count >= 2 {
                let opcode = UInt16(packet[s]) | UInt16(packet[s &+ 1]) << 8
                d.say(CommandTable.describe(opcode: opcode))
                d.addHex("opcode", opcode, shown: false)
            }
            d.fail(DecodeError(.truncated(needed: 3, available: packet.count), layer: "hci",
                               field: "HCI command header", offset: 0))
            return
        }
        let opcode = UInt16(packet[s]) | UInt16(packet[s &+ 1]) << 8
        let declared = Int(packet[s &+ 2])
        d.say(CommandTable.describe(opcode: opcode))
        d.addHex("opcode", opcode, shown: false)
        d.add("plen", declared, shown: false)
        let parameters = packet[(s &+ 3)...].prefix(declared)
        if let layout = CommandTable.layout(opcode) {
            ParameterDecoder.decode(layout.parameters, parameters, into: &d)
        } else if !parameters.isEmpty {
            d.add("parameters", hexString(parameters.prefix(64)) + (parameters.count > 64 ? "..." : ""))
        }
        if declared != packet.count - 3 {
            d.fail(DecodeError(.lengthMismatch(declared: declared, actual: packet.count - 3), layer: "hci",
                               field: "Parameter_Total_Length", offset: 2))
        }
    }
}
