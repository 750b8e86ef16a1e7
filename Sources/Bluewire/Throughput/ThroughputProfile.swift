import BluewireCore
import BluewireGATT

/// The GATT profile of Bluewire's throughput peer (`bluewire serve --throughput`) and of the
/// `bluewire throughput` tool that measures against it.
///
/// One primary service, `B1E3E000-7A55-4C3E-9F1B-2D6C8A4E5F00`, with three characteristics:
///
/// | UUID                                   | Properties                    | Behaviour |
/// |----------------------------------------|-------------------------------|-----------|
/// | `B1E3E001-7A55-4C3E-9F1B-2D6C8A4E5F00` | Notify                        | Stream: once a central enables notifications, sequence-numbered notifications of ATT_MTU − 3 octets (512 at most), as fast as the controller's ACL buffers take them, until it disables them. |
/// | `B1E3E002-7A55-4C3E-9F1B-2D6C8A4E5F00` | Write, Write Without Response | Sink: counts each written packet's sequence number (lost and out-of-order packets per connection). |
/// | `B1E3E003-7A55-4C3E-9F1B-2D6C8A4E5F00` | Read, Write                   | Sink report: reading returns the sink's counters for the reading connection (`ThroughputSinkReport`); any write resets them. |
///
/// Every packet, in either direction, starts with its sequence number (UInt32, little-endian, from 0
/// when a stream starts or the sink is reset); the rest is filler. 128-bit UUIDs because the profile
/// is private (Core Vol 3 Part B §2.5.1: 16-bit UUIDs are assigned by the SIG).
public enum ThroughputProfile {
    /// The throughput service.
    public static let service = BluetoothUUID(high: 0xB1E3_E000_7A55_4C3E, low: 0x9F1B_2D6C_8A4E_5F00)
    /// The streaming characteristic (Notify).
    public static let stream = BluetoothUUID(high: 0xB1E3_E001_7A55_4C3E, low: 0x9F1B_2D6C_8A4E_5F00)
    /// The sink characteristic (Write, Write Without Response).
    public static let sink = BluetoothUUID(high: 0xB1E3_E002_7A55_4C3E, low: 0x9F1B_2D6C_8A4E_5F00)
    /// The sink report characteristic (Read; Write resets).
    public static let sinkReport = BluetoothUUID(high: 0xB1E3_E003_7A55_4C3E, low: 0x9F1B_2D6C_8A4E_5F00)

    /// Octets of the sequence number at the start of every packet.
    public static let sequenceLength = 4

    /// The longest packet at `mtu`: ATT_MTU − 3 (what a notification or write PDU holds, Core Vol 3
    /// Part F §3.4.5.1, §3.4.7.1), but never more than an attribute value may be, 512 octets (§3.2.9).
    public static func maximumPayloadLength(mtu: Int) -> Int {
        Swift.min(mtu - 3, maximumAttributeValueLength)
    }

    /// A packet of `length` octets (at least `sequenceLength`) carrying `sequence`.
    @inlinable
    public static func packet(sequence: UInt32, length: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Swift.max(length, sequenceLength))
        writeSequence(sequence, into: &bytes)
        return bytes
    }

    /// Overwrites the first four octets of `bytes` (which must hold at least four) with `sequence`.
    @inlinable
    public static func writeSequence(_ sequence: UInt32, into bytes: inout [UInt8]) {
        bytes[0] = UInt8(truncatingIfNeeded: sequence)
        bytes[1] = UInt8(truncatingIfNeeded: sequence >> 8)
        bytes[2] = UInt8(truncatingIfNeeded: sequence >> 16)
        bytes[3] = UInt8(truncatingIfNeeded: sequence >> 24)
    }

    /// The sequence number a packet starts with; nil for a packet shorter than four octets.
    @inlinable
    public static func sequence(of packet: ArraySlice<UInt8>) -> UInt32? {
        guard packet.count >= sequenceLength else { return nil }
        let i = packet.startIndex
        return UInt32(packet[i]) | UInt32(packet[i + 1]) << 8 | UInt32(packet[i + 2]) << 16 | UInt32(packet[i + 3]) << 24
    }
}

/// Where the throughput service's characteristics are in a database.
public struct ThroughputHandles: Sendable, Hashable {
    /// The stream characteristic's value handle (what a central subscribes to).
    public var stream: UInt16
    /// Its Client Characteristic Configuration descriptor.
    public var streamConfiguration: UInt16
    /// The sink characteristic's value handle (what a central writes to).
    public var sink: UInt16
    /// The sink report characteristic's value handle.
    public var sinkReport: UInt16

    public init(stream: UInt16, streamConfiguration: UInt16, sink: UInt16, sinkReport: UInt16) {
        self.stream = stream
        self.streamConfiguration = streamConfiguration
        self.sink = sink
        self.sinkReport = sinkReport
    }
}
