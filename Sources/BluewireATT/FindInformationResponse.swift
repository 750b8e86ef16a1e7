import BluewireCore

/// The parameters of a Find Information Response (Core Vol 3 Part F §3.4.3.2): a Format octet and an
/// Information Data list of (Handle, UUID) pairs, all with 16-bit UUIDs (format 0x01) or all with
/// 128-bit UUIDs (format 0x02). GATT descriptor discovery uses it (Vol 3 Part G §4.7.1).
public struct FindInformationResponse: Hashable, Sendable {
    /// Which UUID size every entry of the list uses.
    public enum Format: UInt8, Hashable, Sendable {
        /// Handle(s) and 16-bit Bluetooth UUID(s).
        case uuid16 = 0x01
        /// Handle(s) and 128-bit UUID(s).
        case uuid128 = 0x02

        /// Octets per (handle, UUID) pair.
        @inlinable public var entrySize: Int { self == .uuid16 ? 4 : 18 }
    }

    public private(set) var format: Format
    /// The raw Information Data list.
    public private(set) var informationData: ArraySlice<UInt8>

    /// One attribute: its handle and type.
    public struct Entry: Hashable, Sendable {
        public var handle: UInt16
        public var type: BluetoothUUID
        @inlinable public init(handle: UInt16, type: BluetoothUUID) {
            self.handle = handle
            self.type = type
        }
    }

    /// Validates a received response: a known format and a non-empty list whose size is a multiple of
    /// the entry size. `offset` is where the Format field sits in the PDU.
    public init(format rawFormat: UInt8, informationData: ArraySlice<UInt8>, offset: Int = 1) throws(DecodeError) {
        guard let format = Format(rawValue: rawFormat) else {
            throw DecodeError(.invalidValue(UInt64(rawFormat)), layer: "att", field: "Format", offset: offset)
        }
        guard !informationData.isEmpty, informationData.count % format.entrySize == 0 else {
            throw DecodeError(
                .lengthMismatch(declared: format.entrySize, actual: informationData.count),
                layer: "att", field: "Information Data", offset: offset + 1)
        }
        self.format = format
        self.informationData = informationData
    }

    /// An empty response to fill with `append(handle:type:mtu:)`.
    public init() {
        format = .uuid16
        informationData = []
    }

    /// Appends an entry if this PDU may carry it, returning false when the response is complete:
    /// the first entry fixes the format, and an entry whose UUID size differs, or that would not fit
    /// in ATT_MTU, ends the response (§3.4.3.2; the client asks again from the next handle).
    public mutating func append(handle: UInt16, type: BluetoothUUID, mtu: Int) -> Bool {
        let entryFormat: Format = type.uint16 != nil ? .uuid16 : .uuid128
        if informationData.isEmpty {
            format = entryFormat
        } else if entryFormat != format {
            return false
        }
        guard 2 + informationData.count + format.entrySize <= mtu else { return false }
        informationData.append(UInt8(truncatingIfNeeded: handle))
        informationData.append(UInt8(truncatingIfNeeded: handle >> 8))
        informationData.append(contentsOf: type.attBytes)
        return true
    }

    /// Whether no entry has been appended yet.
    @inlinable public var isEmpty: Bool { informationData.isEmpty }

    /// The entries, in order, without allocating.
    @inlinable public var entries: Entries { Entries(list: informationData, size: format.entrySize) }

    /// A non-allocating iterator over the Information Data list.
    public struct Entries: Sequence, IteratorProtocol, Sendable {
        @usableFromInline let list: ArraySlice<UInt8>
        @usableFromInline let size: Int
        @usableFromInline var index: Int

        @inlinable init(list: ArraySlice<UInt8>, size: Int) {
            self.list = list
            self.size = size
            self.index = list.startIndex
        }

        @inlinable
        public mutating func next() -> Entry? {
            guard list.endIndex - index >= size,
                  let uuid = BluetoothUUID(littleEndian: list[(index + 2)..<(index + size)])
            else { return nil }
            let handle = UInt16(list[index]) | UInt16(list[index + 1]) << 8
            index += size
            return Entry(handle: handle, type: uuid)
        }
    }
}
