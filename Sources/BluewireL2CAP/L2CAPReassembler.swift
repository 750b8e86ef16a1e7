import BluewireCore
import BluewireHCI

/// A complete L2CAP PDU received on a connection: its channel and information payload.
public struct L2CAPPDU: Hashable, Sendable {
    /// The ACL connection handle it arrived on.
    public var handle: UInt16
    public var channelID: L2CAPChannelID
    /// The information payload. For a PDU that arrived in one ACL packet this is a slice of that
    /// packet's data (no copy); for a reassembled PDU, a slice of the reassembly buffer.
    public var payload: ArraySlice<UInt8>

    @inlinable
    public init(handle: UInt16, channelID: L2CAPChannelID, payload: ArraySlice<UInt8>) {
        self.handle = handle
        self.channelID = channelID
        self.payload = payload
    }
}

/// Why the reassembler dropped data (Core Vol 3 Part A §7.2, Vol 4 Part E §5.4.2). The partial PDU,
/// if any, is discarded; PDUs completed earlier are unaffected.
public struct L2CAPReassemblyError: Error, Hashable, Sendable {
    public enum Reason: Hashable, Sendable {
        /// A continuing fragment arrived with no PDU in progress on the handle.
        case continuationWithoutStart(octets: Int)
        /// A start fragment arrived while a PDU was still incomplete; `receivedOctets` of the old PDU
        /// (header included) out of `expectedOctets` were dropped.
        case startBeforeCompletion(receivedOctets: Int, expectedOctets: Int)
        /// Fragments carried more octets than the Basic L2CAP header declared.
        case overflow(declared: Int, received: Int)
        /// The header declared a PDU larger than this reassembler accepts; its fragments are dropped.
        case pduTooLarge(declared: Int, maximum: Int)
    }

    public var handle: UInt16
    public var reason: Reason

    @inlinable
    public init(handle: UInt16, reason: Reason) {
        self.handle = handle
        self.reason = reason
    }
}

/// What one ACL packet produced: possibly an error about data dropped, possibly a complete PDU
/// (both when a start fragment cuts short an older incomplete PDU and is itself complete).
public struct L2CAPReassemblyResult: Hashable, Sendable {
    public var pdu: L2CAPPDU?
    public var error: L2CAPReassemblyError?

    @inlinable
    public init(pdu: L2CAPPDU? = nil, error: L2CAPReassemblyError? = nil) {
        self.pdu = pdu
        self.error = error
    }
}

/// Reassembles L2CAP PDUs from HCI ACL Data packets, per connection handle (sans-I/O).
///
/// A start fragment (PB 0b00, 0b10 or 0b11) begins a PDU; continuing fragments (PB 0b01) add to it
/// until the octets declared by the Basic L2CAP header (§3.1) have arrived. Incoming packets are
/// accepted whatever their size: emulated controllers deliver whole PDUs in one packet larger than
/// the buffer size they advertise. Memory per handle is bounded by `maximumPDUSize`.
public struct L2CAPReassembler: Sendable {
    /// The largest PDU accepted, header included. The Basic header's 16-bit length caps this at
    /// 65,535 + 4 octets.
    public let maximumPDUSize: Int

    @usableFromInline
    enum Partial: Sendable {
        /// Octets received so far (header included); `expected` is known once the header has arrived.
        case collecting(buffer: [UInt8], expected: Int?)
        /// A PDU too large to keep: count its octets so its continuations are dropped quietly.
        case discarding(remaining: Int)
    }

    @usableFromInline var partials: LinearMap<UInt16, Partial> = LinearMap()

    public init(maximumPDUSize: Int = 65_535 + L2CAPBasicHeader.size) {
        self.maximumPDUSize = Swift.min(Swift.max(maximumPDUSize, L2CAPBasicHeader.size), 65_535 + L2CAPBasicHeader.size)
    }

    /// Whether a PDU is partly received on `handle`.
    public func isReassembling(handle: UInt16) -> Bool { partials[handle] != nil }

    /// How many handles have a PDU partly received (a diagnostic: a link's end must leave none).
    public var partialPDUCount: Int { partials.count }

    /// Forgets any partial PDU on a handle that has disconnected.
    public mutating func disconnected(handle: UInt16) {
        partials[handle] = nil
    }

    /// Feeds one ACL packet received from the controller.
    public mutating func receive(_ packet: ACLPacket) -> L2CAPReassemblyResult {
        let handle = packet.handle
        let data = packet.data
        if !packet.packetBoundary.isStart {
            return continuation(handle: handle, data: data)
        }
        var dropped: L2CAPReassemblyError?
        // Checked for emptiness first: the common packet is a whole PDU on a link with no partial
        // one, and a dictionary removal costs a hash per packet.
        if !partials.isEmpty, let old = partials.removeValue(forKey: handle) {
            switch old {
            case .collecting(let buffer, let expected):
                dropped = L2CAPReassemblyError(
                    handle: handle,
                    reason: .startBeforeCompletion(receivedOctets: buffer.count, expectedOctets: expected ?? 0))
            case .discarding:
                break
            }
        }
        guard data.count >= L2CAPBasicHeader.size else {
            // The header itself is split across fragments (possible only with tiny buffers).
            var buffer: [UInt8] = []
            buffer.reserveCapacity(L2CAPBasicHeader.size)
            buffer.append(contentsOf: data)
            partials[handle] = .collecting(buffer: buffer, expected: nil)
            return L2CAPReassemblyResult(error: dropped)
        }
        let s = data.startIndex
        let total = Int(UInt16(data[s]) | UInt16(data[s + 1]) << 8) + L2CAPBasicHeader.size
        if total > maximumPDUSize {
            partials[handle] = .discarding(remaining: total - data.count)
            return L2CAPReassemblyResult(
                error: dropped ?? L2CAPReassemblyError(handle: handle, reason: .pduTooLarge(declared: total, maximum: maximumPDUSize)))
        }
        if data.count == total {
            // Single-fragment PDU: hand out a slice of the packet, no copy.
            let channel = L2CAPChannelID(UInt16(data[s + 2]) | UInt16(data[s + 3]) << 8)
            let pdu = L2CAPPDU(handle: handle, channelID: channel, payload: data[(s + L2CAPBasicHeader.size)...])
            return L2CAPReassemblyResult(pdu: pdu, error: dropped)
        }
        if data.count > total {
            return L2CAPReassemblyResult(
                error: dropped ?? L2CAPReassemblyError(handle: handle, reason: .overflow(declared: total, received: data.count)))
        }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(total)
        buffer.append(contentsOf: data)
        partials[handle] = .collecting(buffer: buffer, expected: total)
        return L2CAPReassemblyResult(error: dropped)
    }

    mutating func continuation(handle: UInt16, data: ArraySlice<UInt8>) -> L2CAPReassemblyResult {
        guard let partial = partials.removeValue(forKey: handle) else {
            return L2CAPReassemblyResult(
                error: L2CAPReassemblyError(handle: handle, reason: .continuationWithoutStart(octets: data.count)))
        }
        switch partial {
        case .discarding(let remaining):
            let left = remaining - data.count
            if left > 0 { partials[handle] = .discarding(remaining: left) }
            return L2CAPReassemblyResult()
        case .collecting(var buffer, var expected):
            buffer.append(contentsOf: data)
            if expected == nil, buffer.count >= L2CAPBasicHeader.size {
                let total = Int(UInt16(buffer[0]) | UInt16(buffer[1]) << 8) + L2CAPBasicHeader.size
                if total > maximumPDUSize {
                    let left = total - buffer.count
                    if left > 0 { partials[handle] = .discarding(remaining: left) }
                    return L2CAPReassemblyResult(
                        error: L2CAPReassemblyError(handle: handle, reason: .pduTooLarge(declared: total, maximum: maximumPDUSize)))
                }
                buffer.reserveCapacity(total)
                expected = total
            }
            guard let total = expected else {
                partials[handle] = .collecting(buffer: buffer, expected: nil)
                return L2CAPReassemblyResult()
            }
            if buffer.count > total {
                return L2CAPReassemblyResult(
                    error: L2CAPReassemblyError(handle: handle, reason: .overflow(declared: total, received: buffer.count)))
            }
            if buffer.count < total {
                partials[handle] = .collecting(buffer: buffer, expected: total)
                return L2CAPReassemblyResult()
            }
            let channel = L2CAPChannelID(UInt16(buffer[2]) | UInt16(buffer[3]) << 8)
            return L2CAPReassemblyResult(
                pdu: L2CAPPDU(handle: handle, channelID: channel, payload: buffer[L2CAPBasicHeader.size...]))
        }
    }
}
