import BluewireATT

/// Read Long Characteristic Values (Core Vol 3 Part G §4.8.3), also Read Long Characteristic
/// Descriptors (§4.12.2).
///
/// A Read Request first, then Read Blob Requests at the offset of the octets received so far, for as
/// long as each answer is full (ATT_MTU − 1 octets): a shorter answer is the last part. Attribute Not
/// Long for the first blob and Invalid Offset at exactly the value's length both mean the value ended at
/// a part boundary (servers answer either way, §3.4.4.5). Attribute values are at most 512 octets
/// (Vol 3 Part F §3.2.9); a server that keeps sending beyond that is refused rather than followed.
public struct ReadLongCharacteristicValues: GATTClientProcedure, Sendable {
    public let handle: UInt16
    public let mtu: Int
    /// The octets read so far.
    public private(set) var value: [UInt8] = []
    @usableFromInline var readingBlobs = false
    /// The largest value accepted (512, the attribute value limit).
    public static let maximumValueLength = 512

    public init(handle: UInt16, mtu: Int) {
        self.handle = handle
        self.mtu = mtu
    }

    /// Continues a value whose first `octets` arrived some other way (a Read Multiple Variable Length
    /// answer cut at ATT_MTU): the next answer expected is a Read Blob Response at that offset.
    mutating func resume(after octets: [UInt8]) {
        value = octets
        readingBlobs = true
    }

    public mutating func start() throws(GATTClientError) -> GATTProcedureStep<[UInt8]> {
        guard handle != 0 else { throw .invalidHandleRange(start: 0, end: 0) }
        return .request(.readRequest(handle: handle))
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTClientError) -> GATTProcedureStep<[UInt8]> {
        let part: ArraySlice<UInt8>
        switch response {
        case .readResponse(let bytes) where !readingBlobs:
            part = bytes
        case .readBlobResponse(let bytes) where readingBlobs:
            part = bytes
        case .errorResponse(.readBlobRequest, _, .attributeNotLong) where readingBlobs,
            .errorResponse(.readBlobRequest, _, .invalidOffset) where readingBlobs:
            return .finished(value)
        default:
            throw GATTClientError.unexpected(response, to: readingBlobs ? .readBlobRequest : .readRequest)
        }
        readingBlobs = true
        value.append(contentsOf: part)
        guard value.count <= Self.maximumValueLength else {
            throw .valueTooLong(length: value.count, maximum: Self.maximumValueLength)
        }
        if part.count < mtu - 1 { return .finished(value) }
        return .request(.readBlobRequest(handle: handle, offset: UInt16(value.count)))
    }
}
