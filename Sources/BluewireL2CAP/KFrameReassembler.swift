/// Rebuilds SDUs from the information payloads of K-frames on one credit based channel (Core Vol 3
/// Part A §3.4.3): the first K-frame of an SDU starts with the 2-octet SDU Length, the rest carry
/// only data, and the SDU is complete when its length is reached.
///
/// It holds at most one SDU (≤ MTU octets). A breach is thrown as a `CreditBasedFlowViolation`;
/// the caller must then disconnect the channel, and this value is not used again.
public struct KFrameReassembler: Hashable, Sendable {
    /// Our MTU: the largest SDU we accept.
    public var mtu: Int
    /// Our MPS: the largest K-frame information payload we accept.
    public var mps: Int

    var buffer: [UInt8] = []
    var expectedLength: Int?
    var frames = 0

    @inlinable
    public init(mtu: Int, mps: Int) {
        self.mtu = mtu
        self.mps = mps
    }

    /// A complete SDU and the number of K-frames (hence credits) it took.
    public struct SDU: Hashable, Sendable {
        public var bytes: [UInt8]
        public var kFrames: Int
    }

    /// Whether part of an SDU has been received.
    public var isReassembling: Bool { expectedLength != nil }
    /// Octets held for the SDU in progress.
    public var bufferedCount: Int { buffer.count }

    /// Takes one K-frame's information payload; returns the SDU it completes, if any.
    public mutating func receive(_ payload: ArraySlice<UInt8>) throws(CreditBasedFlowViolation) -> SDU? {
        guard payload.count <= mps else { throw .kFrameLongerThanMPS(length: payload.count, mps: mps) }
        var data = payload
        let expected: Int
        if let pending = expectedLength {
            expected = pending
        } else {
            guard payload.count >= 2 else { throw .missingSDULength(length: payload.count) }
            expected = Int(payload[payload.startIndex]) | Int(payload[payload.startIndex + 1]) << 8
            guard expected <= mtu else { throw .sduLengthExceedsMTU(sduLength: expected, mtu: mtu) }
            data = payload.dropFirst(2)
            expectedLength = expected
            buffer.reserveCapacity(expected)
        }
        frames += 1
        guard buffer.count + data.count <= expected else {
            throw .sduLongerThanDeclared(sduLength: expected, received: buffer.count + data.count)
        }
        buffer.append(contentsOf: data)
        guard buffer.count == expected else { return nil }
        let sdu = SDU(bytes: buffer, kFrames: frames)
        buffer = []
        expectedLength = nil
        frames = 0
        return sdu
    }
}

/// Splits SDUs into K-frame information payloads of at most MPS octets (Core Vol 3 Part A §3.4.3,
/// §10.1): the first starts with the 2-octet SDU Length, so an SDU of n octets takes
/// ⌈(n + 2) / MPS⌉ K-frames, each costing one credit.
public struct KFrameSegmenter: Hashable, Sendable {
    /// The peer's MPS.
    public var mps: Int
    var framed: [UInt8] = []
    var offset = 0

    @inlinable
    public init(mps: Int) { self.mps = mps }

    /// Whether an SDU is partly sent.
    public var isSegmenting: Bool { offset < framed.count }

    /// The number of K-frames an SDU of `length` octets takes at MPS `mps`.
    public static func kFrameCount(sduLength length: Int, mps: Int) -> Int {
        mps <= 0 ? 0 : (length + 2 + mps - 1) / mps
    }

    /// Starts the next SDU; the previous must have been fully segmented.
    public mutating func start(_ sdu: ArraySlice<UInt8>) {
        framed = []
        framed.reserveCapacity(sdu.count + 2)
        framed.append(UInt8(truncatingIfNeeded: sdu.count))
        framed.append(UInt8(truncatingIfNeeded: sdu.count >> 8))
        framed.append(contentsOf: sdu)
        offset = 0
    }

    /// The next K-frame payload of the SDU in progress, nil when it is finished.
    public mutating func nextKFrame() -> ArraySlice<UInt8>? {
        guard offset < framed.count, mps > 0 else { return nil }
        let end = min(framed.count, offset + mps)
        defer { offset = end }
        return framed[offset..<end]
    }
}
