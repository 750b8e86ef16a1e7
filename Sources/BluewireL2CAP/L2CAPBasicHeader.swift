import BluewireCore

/// The Basic L2CAP header (Core Vol 3 Part A §3.1): the PDU Length (payload octets, header excluded)
/// and the destination Channel ID. Fixed channels such as ATT and the LE signaling channel use B-frames,
/// which are this header followed by the information payload.
public struct L2CAPBasicHeader: Hashable, Sendable {
    /// Length of the information payload in octets (0–65535).
    public var length: UInt16
    /// Destination channel.
    public var channelID: L2CAPChannelID

    /// The header size on the wire.
    public static let size = 4

    @inlinable
    public init(length: UInt16, channelID: L2CAPChannelID) {
        self.length = length
        self.channelID = channelID
    }

    /// Reads the 4 header octets from `reader`.
    @inlinable
    public init(from reader: inout ByteReader) throws(DecodeError) {
        length = try reader.readUInt16("PDU Length")
        channelID = L2CAPChannelID(try reader.readUInt16("Channel ID"))
    }

    /// Decodes a header from the first 4 octets of `bytes` (layer "l2cap").
    @inlinable
    public init(decoding bytes: ArraySlice<UInt8>) throws(DecodeError) {
        var reader = ByteReader(bytes, layer: "l2cap")
        try self.init(from: &reader)
    }

    @inlinable
    public func encode(into w: inout ByteWriter) {
        w.append(length)
        w.append(channelID.rawValue)
    }
}

/// A complete L2CAP basic information frame (B-frame, Core Vol 3 Part A §3.1): channel and payload.
/// `payload` is a slice of the received bytes when decoded.
public struct L2CAPBasicFrame: Hashable, Sendable {
    public var channelID: L2CAPChannelID
    public var payload: ArraySlice<UInt8>

    @inlinable
    public init(channelID: L2CAPChannelID, payload: ArraySlice<UInt8>) {
        self.channelID = channelID
        self.payload = payload
    }

    /// Decodes a whole B-frame; the PDU Length must equal the number of payload octets present.
    @inlinable
    public init(decoding bytes: ArraySlice<UInt8>) throws(DecodeError) {
        var reader = ByteReader(bytes, layer: "l2cap")
        let header = try L2CAPBasicHeader(from: &reader)
        guard reader.remainingCount == Int(header.length) else {
            throw DecodeError(
                .lengthMismatch(declared: Int(header.length), actual: reader.remainingCount),
                layer: "l2cap", field: "PDU Length", offset: 0)
        }
        channelID = header.channelID
        payload = reader.readRemaining()
    }

    @inlinable
    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        try self.init(decoding: bytes[...])
    }

    /// The frame's wire form: header then payload.
    @inlinable
    public func encode() -> [UInt8] {
        var w = ByteWriter(capacity: L2CAPBasicHeader.size + payload.count)
        encode(into: &w)
        return w.bytes
    }

    @inlinable
    public func encode(into w: inout ByteWriter) {
        L2CAPBasicHeader(length: UInt16(truncatingIfNeeded: payload.count), channelID: channelID).encode(into: &w)
        w.append(contentsOf: payload)
    }
}
