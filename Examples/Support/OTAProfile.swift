import BluewireCore

/// The firmware-update (OTA) example's GATT service.
///
/// - `status` (read, notify, write): reads and notifies an `OTAStatus`; takes commands: authorize
///   (`0x01` + the access token), begin (`0x02` + image length + CRC-32, both UInt32 little-endian),
///   finish (`0x03`: the peripheral checks length and CRC-32 and reports verified or failed).
/// - `data` (write): one chunk, its offset in the image (UInt32 little-endian) then its bytes. A chunk
///   at the next offset is appended; one wholly before it (sent again after a link drop ate its
///   response) is accepted and ignored; one past it is refused with Invalid Offset.
///
/// Writes to either need an authorized link (the token written on this link), else Insufficient
/// Authorization (0x08): the application-level authorization the central's `OperationAuthorizer`
/// provides (Bluewire's `BluetoothHost` has no pairing yet). The transfer survives disconnections:
/// the peripheral keeps what it received, and a reconnected central goes on where it was.
public enum OTAProfile {
    public static let service = BluetoothUUID(parsing: "8c6b0a01-3a1b-4d2e-9f10-626c75657769")!
    public static let status = BluetoothUUID(parsing: "8c6b0a02-3a1b-4d2e-9f10-626c75657769")!
    public static let data = BluetoothUUID(parsing: "8c6b0a03-3a1b-4d2e-9f10-626c75657769")!

    /// The token the example peripheral accepts unless given another.
    public static let defaultToken = "bluewire-ota"

    public static func authorizeCommand(token: String) -> [UInt8] { [0x01] + Array(token.utf8) }

    public static func beginCommand(length: Int, crc: UInt32) -> [UInt8] {
        [0x02] + littleEndian(UInt32(length)) + littleEndian(crc)
    }

    public static let finishCommand: [UInt8] = [0x03]

    /// One chunk for the data characteristic.
    public static func chunk(offset: Int, _ bytes: ArraySlice<UInt8>) -> [UInt8] {
        littleEndian(UInt32(offset)) + bytes
    }

    /// The chunk's offset and bytes, or nil if it is too short to carry an offset.
    public static func parseChunk(_ value: [UInt8]) -> (offset: Int, bytes: ArraySlice<UInt8>)? {
        guard value.count >= 4 else { return nil }
        return (Int(readLittleEndian(value[0..<4])), value[4...])
    }

    /// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) of `bytes`, continuing from `crc`.
    public static func crc32<Bytes: Sequence<UInt8>>(_ bytes: Bytes, continuing crc: UInt32 = 0) -> UInt32 {
        var value = ~crc
        for byte in bytes {
            value ^= UInt32(byte)
            for _ in 0..<8 { value = (value >> 1) ^ (0xEDB8_8320 & (0 &- (value & 1))) }
        }
        return ~value
    }

    /// A test image: `length` bytes of a fixed pseudo-random sequence (xorshift32), so both ends and
    /// the tests can make the same one.
    public static func testImage(length: Int, seed: UInt32 = 0x0B1E_3A7E) -> [UInt8] {
        var state = seed
        return (0..<length).map { _ in
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            return UInt8(truncatingIfNeeded: state)
        }
    }

    public static func littleEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 24)]
    }

    public static func readLittleEndian(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
}

/// What the status characteristic reads and notifies: 13 octets, the state then received length,
/// expected length and CRC-32 of what was received so far (UInt32 little-endian each).
public struct OTAStatus: Hashable, Sendable, CustomStringConvertible {
    public enum State: UInt8, Sendable {
        case idle = 0, receiving = 1, verified = 2, failed = 3
    }

    public var state: State
    public var received: Int
    public var expected: Int
    public var crc: UInt32

    public init(state: State, received: Int, expected: Int, crc: UInt32) {
        self.state = state
        self.received = received
        self.expected = expected
        self.crc = crc
    }

    public init?(_ value: some Collection<UInt8>) {
        let bytes = Array(value)
        guard bytes.count == 13, let state = State(rawValue: bytes[0]) else { return nil }
        self.state = state
        received = Int(OTAProfile.readLittleEndian(bytes[1..<5]))
        expected = Int(OTAProfile.readLittleEndian(bytes[5..<9]))
        crc = OTAProfile.readLittleEndian(bytes[9..<13])
    }

    public var bytes: [UInt8] {
        [state.rawValue] + OTAProfile.littleEndian(UInt32(received)) + OTAProfile.littleEndian(UInt32(expected))
            + OTAProfile.littleEndian(crc)
    }

    public var description: String {
        "\(state) \(received)/\(expected) bytes, CRC-32 \(hex(crc, width: 8))"
    }
}
