import BluewireCore

/// Decodes a UUID carried in an attribute value. ATT carries 16-bit and 128-bit UUIDs only
/// (Core Vol 3 Part F §3.2.1); any other length is a malformed response.
@inlinable
func attUUID(_ bytes: ArraySlice<UInt8>, field: StaticString, offset: Int) throws(GATTClientError) -> BluetoothUUID {
    guard bytes.count == 2 || bytes.count == 16, let uuid = BluetoothUUID(littleEndian: bytes) else {
        throw .malformedResponse(DecodeError(.invalidValue(UInt64(bytes.count)), layer: "gatt", field: field, offset: offset))
    }
    return uuid
}

/// A little-endian UInt16 at `index` of a slice the caller has length-checked.
@inlinable
func uint16(_ bytes: ArraySlice<UInt8>, at index: Int) -> UInt16 {
    UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8
}

/// Where `slice` starts in a response PDU whose list begins `listOffset` octets into the PDU.
@inlinable
func pduOffset(of slice: ArraySlice<UInt8>, in list: ArraySlice<UInt8>, listOffset: Int) -> Int {
    slice.startIndex - list.startIndex + listOffset
}
