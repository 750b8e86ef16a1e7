import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireL2CAP

// Left out of builds with BLUEWIRE_NO_STREAMS (the firmware images); HostEngine+NoStreams stands in.
#if !BLUEWIRE_NO_STREAMS

/// One running `ATTStream`.
struct ATTStreamState: Sendable {
    var id: HostRequestID
    var connection: UInt16
    var stream: ATTStream
    /// Values handed to the link's ACL queue so far.
    var sent = 0
    var sequence: UInt32
    /// Set once the stream has ended: it completes when the controller has taken what it queued.
    var end: ATTStreamEnd?
    /// The L2CAP frame of the last value (header, opcode, handle, value), reused: only the sequence
    /// number changes from one value to the next.
    var frame: [UInt8] = []

    init(id: HostRequestID, connection: UInt16, stream: ATTStream) {
        self.id = id
        self.connection = connection
        self.stream = stream
        sequence = stream.firstSequence
    }
}

extension HostEngine {
    /// `.streamATT`: checks the stream can run, replaces a stream of the same PDU on the link, and
    /// fills the link's ACL queue.
    mutating func streamATT(_ id: HostRequestID, _ connection: UInt16, _ stream: ATTStream) {
        guard let link = links[connection], !link.bearer.isClosed else { return complete(id, .failure(.unknownConnection(connection))) }
        switch stream.pdu {
        case .notification:
            // The checks of `notifyOne`: a characteristic value with Notify and a CCCD (Core Vol 3 Part G §3.3.1.1).
            guard let characteristic = server.database.characteristic(valueHandle: stream.valueHandle) else {
                return complete(id, .failure(.server(.notCharacteristicValue(stream.valueHandle))))
            }
            guard characteristic.properties.contains(.notify), characteristic.clientConfigurationHandle != nil else {
                return complete(id, .failure(.server(.notSupportedByCharacteristic(stream.valueHandle))))
            }
        case .writeCommand:
            if let refusal = writeCommandStreamRefusal(connection, stream) { return complete(id, .failure(refusal)) }
        }
        if let running = attStreams.firstIndex(where: { $0.connection == connection && $0.stream.pdu == stream.pdu && $0.end == nil }) {
            attStreams[running].end = .replaced
        }
        attStreams.append(ATTStreamState(id: id, connection: connection, stream: stream))
        pumpATTStreams()
    }

    /// `.stopATTStream`: the link's running stream of `pdu` ends (`.stopped`); done either way.
    mutating func stopATTStream(_ id: HostRequestID, _ connection: UInt16, _ pdu: ATTStream.PDU) {
        if let running = attStreams.firstIndex(where: { $0.connection == connection && $0.stream.pdu == pdu && $0.end == nil }) {
            attStreams[running].end = .stopped
        }
        pumpATTStreams()
        complete(id, .success(.done))
    }

    /// Values the link's running stream of `pdu` has handed to the ACL queue; nil when none runs.
    /// Read as often as wanted (a progress line): it changes nothing.
    public func attStreamSent(connection: UInt16, pdu: ATTStream.PDU) -> Int? {
        attStreams.first { $0.connection == connection && $0.stream.pdu == pdu && $0.end == nil }?.sent
    }

    /// Tops every running stream's link up to the queue length it keeps, ends the streams whose
    /// central unsubscribed or whose limit is reached, and completes the ended ones once the
    /// controller has taken everything queued on their link's fixed channels. Runs when buffers come
    /// back (Number Of Completed Packets), when a stream starts or stops, and after the server's events.
    mutating func pumpATTStreams() {
        guard !attStreams.isEmpty else { return }
        // Two buffer counts wait in the host behind what the controller holds (as BluetoothHost kept
        // them): the controller always has the next packets ready, and memory stays flat.
        let high = Swift.max(2 * aclCredits.totalBuffers, 2)
        var index = 0
        while index < attStreams.count {
            let connection = attStreams[index].connection
            guard let link = links.index(forKey: connection) else {
                // linkDisconnected completed the link's streams; nothing else removes a link.
                attStreams.remove(at: index)
                continue
            }
            if attStreams[index].end == nil {
                fillATTStream(index, link: link, high: high)
            }
            if let end = attStreams[index].end, aclCredits.queuedCount(handle: connection, lane: .fixed) == 0 {
                let finished = attStreams.remove(at: index)
                complete(finished.id, .success(.streamed(sent: finished.sent, end: end)))
                continue
            }
            index += 1
        }
    }

    /// Sends values of the stream at `index` while the controller has buffers and queues more until
    /// `high` ACL packets wait on its link, or ends it.
    mutating func fillATTStream(_ index: Int, link: Int, high: Int) {
        let connection = attStreams[index].connection
        let stream = attStreams[index].stream
        if stream.pdu == .notification, !server.subscription(connection: connection, valueHandle: stream.valueHandle).notifications {
            attStreams[index].end = .unsubscribed
            return
        }
        if links.values[link].bearer.isClosed {
            attStreams[index].end = .stopped
            return
        }
        let length = stream.valueLength(mtu: links.values[link].bearer.mtu)
        if attStreams[index].frame.count != 7 + length {
            attStreams[index].frame = Self.streamFrame(stream, length: length)
        }
        while aclCredits.queuedCount(handle: connection) < high {
            if let limit = stream.limit, attStreams[index].sent >= limit {
                attStreams[index].end = .limit
                return
            }
            let sequence = attStreams[index].sequence
            attStreams[index].frame[7] = UInt8(truncatingIfNeeded: sequence)
            attStreams[index].frame[8] = UInt8(truncatingIfNeeded: sequence >> 8)
            attStreams[index].frame[9] = UInt8(truncatingIfNeeded: sequence >> 16)
            attStreams[index].frame[10] = UInt8(truncatingIfNeeded: sequence >> 24)
            // The template is copied into each packet's own bytes, so it is never shared and its
            // sequence number is rewritten in place. Straight to the controller while it has
            // buffers, so the queue counts only what waits.
            sendL2CAPFrame(handle: connection, frame: attStreams[index].frame[...])
            attStreams[index].sequence = sequence &+ 1
            attStreams[index].sent += 1
        }
    }

    /// The L2CAP frame of one value on the ATT channel (Core Vol 3 Part A §3.1): length, CID 0x0004,
    /// the opcode, the handle, then `length` octets (the sequence number goes in the first four).
    static func streamFrame(_ stream: ATTStream, length: Int) -> [UInt8] {
        var frame = [UInt8](repeating: 0, count: 7 + length)
        let pduLength = UInt16(truncatingIfNeeded: 3 + length)
        frame[0] = UInt8(truncatingIfNeeded: pduLength)
        frame[1] = UInt8(truncatingIfNeeded: pduLength >> 8)
        frame[2] = 0x04
        frame[4] = stream.pdu == .notification ? ATTOpcode.handleValueNotification.rawValue : ATTOpcode.writeCommand.rawValue
        frame[5] = UInt8(truncatingIfNeeded: stream.valueHandle)
        frame[6] = UInt8(truncatingIfNeeded: stream.valueHandle >> 8)
        return frame
    }

    /// The link went down: its streams complete at once with the reason (the queue was dropped).
    mutating func attStreamsLinkDown(_ connection: UInt16, reason: HCIStatus) {
        guard !attStreams.isEmpty else { return }
        var index = 0
        while index < attStreams.count {
            guard attStreams[index].connection == connection else {
                index += 1
                continue
            }
            let finished = attStreams.remove(at: index)
            complete(finished.id, .success(.streamed(sent: finished.sent, end: .disconnected(reason))))
        }
    }
}

extension HostEngine {
    #if BLUEWIRE_NO_CENTRAL
    /// No GATT client in this build: Write Command streams are not supported.
    func writeCommandStreamRefusal(_ connection: UInt16, _ stream: ATTStream) -> HostEngineError? { .notSupported }
    #else
    /// Write Commands are checked against the peer's state machine as `.writeWithoutResponse` is
    /// (HostEngine+ClientPhases): refused before a discovery.
    func writeCommandStreamRefusal(_ connection: UInt16, _ stream: ATTStream) -> HostEngineError? {
        refusalOutsideQueue(connection, .writeWithoutResponse(handle: stream.valueHandle, value: []))
    }
    #endif
}

#endif  // !BLUEWIRE_NO_STREAMS
