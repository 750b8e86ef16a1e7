import BluewireCore

enum HCIEventDescription {
    static func describe(_ packet: ArraySlice<UInt8>, into d: inout PacketDescription) {
        guard packet.count >= 2 else {
            d.fail(DecodeError(.truncated(needed: 2, available: packet.count), layer: "hci", field: "event header", offset: 0))
            return
        }
        d.addHex("event", packet[packet.startIndex], digits: 2)
    }
}
