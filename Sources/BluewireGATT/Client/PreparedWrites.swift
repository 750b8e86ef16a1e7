import BluewireATT

/// Write Long Characteristic Values (Core Vol 3 Part G §4.9.4) and Reliable Writes (§4.9.5): values
/// are queued on the server with Prepare Write Requests of at most ATT_MTU − 5 octets each, then
/// written at once with an Execute Write Request.
///
/// Every Prepare Write Response echoes the handle, offset and part value; the client compares it with
/// what it sent (§4.9.5: a mismatch means the data was corrupted). On a mismatch, or an Error Response
/// to a Prepare Write, the client cancels the server's queue with Execute Write (flags 0x00, cancel
/// all) before reporting the failure, so no partial value is ever written.
public struct PreparedWrites: GATTClientProcedure, Sendable {
    /// One Prepare Write Request's worth of data.
    public struct Part: Hashable, Sendable {
        public var handle: UInt16
        public var offset: UInt16
        public var value: ArraySlice<UInt8>
    }

    /// The Prepare Write Requests to send, in order.
    public let parts: [Part]
    @usableFromInline var index = 0
    @usableFromInline var phase = Phase.preparing

    @usableFromInline
    enum Phase: Sendable {
        case preparing
        case executing
        /// An Execute Write (cancel) is outstanding; report this error when it is answered.
        case cancelling(GATTClientError)
    }

    /// Write Long Characteristic Values: `value` written at `handle` from `offset`, split into parts of
    /// ATT_MTU − 5 octets.
    public static func writeLong(handle: UInt16, value: [UInt8], offset: UInt16 = 0, mtu: Int) -> PreparedWrites {
        PreparedWrites(parts: split(handle: handle, value: value, offset: offset, mtu: mtu))
    }

    /// Reliable Writes: every value written to its handle, all or none.
    public static func reliable(_ writes: [(handle: UInt16, value: [UInt8])], mtu: Int) -> PreparedWrites {
        var parts: [Part] = []
        for write in writes { parts += split(handle: write.handle, value: write.value, offset: 0, mtu: mtu) }
        return PreparedWrites(parts: parts)
    }

    public init(parts: [Part]) {
        self.parts = parts
    }

    static func split(handle: UInt16, value: [UInt8], offset: UInt16, mtu: Int) -> [Part] {
        let size = max(1, mtu - 5)
        // An empty value still needs one (empty) part so that Execute Write writes it.
        guard !value.isEmpty else { return [Part(handle: handle, offset: offset, value: [])] }
        var parts: [Part] = []
        var start = 0
        while start < value.count {
            let end = min(start + size, value.count)
            parts.append(Part(handle: handle, offset: offset &+ UInt16(truncatingIfNeeded: start), value: value[start..<end]))
            start = end
        }
        return parts
    }

    public mutating func start() throws(GATTClientError) -> GATTProcedureStep<Void> {
        guard let first = parts.first else { throw .invalidHandleRange(start: 0, end: 0) }
        for part in parts where part.handle == 0 { throw .invalidHandleRange(start: 0, end: 0) }
        // Offsets are 16-bit and values at most 512 octets (Vol 3 Part F §3.2.9).
        for part in parts where Int(part.offset) + part.value.count > 512 {
            throw .valueTooLong(length: Int(part.offset) + part.value.count, maximum: 512)
        }
        return .request(Self.prepare(first))
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTClientError) -> GATTProcedureStep<Void> {
        switch phase {
        case .preparing:
            let sent = parts[index]
            switch response {
            case .prepareWriteResponse(let handle, let offset, let value):
                guard handle == sent.handle, offset == sent.offset, value.elementsEqual(sent.value) else {
                    return cancel(because: .preparedWriteMismatch(handle: sent.handle, offset: sent.offset))
                }
                index += 1
                if index < parts.count { return .request(Self.prepare(parts[index])) }
                phase = .executing
                return .request(.executeWriteRequest(flags: .writeAllPreparedValues))
            default:
                return cancel(because: GATTClientError.unexpected(response, to: .prepareWriteRequest))
            }
        case .executing:
            guard case .executeWriteResponse = response else {
                throw GATTClientError.unexpected(response, to: .executeWriteRequest)
            }
            return .finished(())
        case .cancelling(let error):
            // Whatever the server says to the cancel, the write has failed for the earlier reason.
            throw error
        }
    }

    @usableFromInline
    mutating func cancel(because error: GATTClientError) -> GATTProcedureStep<Void> {
        phase = .cancelling(error)
        return .request(.executeWriteRequest(flags: .cancelAllPreparedWrites))
    }

    @usableFromInline
    static func prepare(_ part: Part) -> ATTPDU {
        .prepareWriteRequest(handle: part.handle, offset: part.offset, partValue: part.value)
    }
}
