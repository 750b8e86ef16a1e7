import BluewireCore

enum HCICommandDescription {
    static func describe(_ packet: ArraySlice<UInt8>, into d: inout PacketDescription) {
        guard packet.count >= 3 else {
            d.fail(DecodeError(.truncated(needed: 3, available: packet.count), layer: "hci", field: "command header", offset: 0))
            return
        }
        let s = packet.startIndex
        d.addHex("opcode", UInt16(packet[s]) | UInt16(packet[s &+ 1]) << 8)
    }
}
