import BluewireCore
import BluewireHCI

/// ACL data from a host to its peer: buffer accounting, link-layer segmentation, delivery and
/// Number Of Completed Packets.
extension LinkWorld {
    func receiveACL(_ bytes: ArraySlice<UInt8>, _ c: ControllerState) {
        guard let packet = try? ACLPacket(decoding: bytes), packet.header.broadcast == .pointToPoint,
            packet.packetBoundary != .completeFlushable
        else { return c.record(.malformedACLPacket(bytes: Array(bytes))) }
        guard let (connection, side) = connection(packet.handle, of: c) else {
            if let allowance = c.lateACLAllowance[packet.handle], allowance > 0 {
                c.lateACLAllowance[packet.handle] = allowance - 1
                c.lateACLPackets.append(.init(handle: packet.handle, payload: Array(packet.data)))
                return
            }
            return c.record(.aclUnknownHandle(handle: packet.handle, payload: Array(packet.data)))
        }
        if packet.packetBoundary == .firstFlushable { c.record(.automaticallyFlushableOnLE(handle: packet.handle)) }
        let buffer = c.configuration.effectiveLEBuffer
        guard c.aclBuffersInUse < Int(buffer.packetCount) else {
            c.record(.aclBufferOverflow(handle: packet.handle, buffersInUse: c.aclBuffersInUse))
            // Data Buffer Overflow (Core Vol 4 Part E §7.7.26), Link_Type 0x01: ACL.
            return c.sendEvent(EventCode.dataBufferOverflow, [0x01])
        }
        guard packet.data.count <= Int(buffer.packetLength) else {
            return c.record(.aclPacketTooLong(handle: packet.handle, length: packet.data.count, maximum: Int(buffer.packetLength)))
        }
        c.aclBuffersInUse += 1
        connection.ends[side].unacknowledgedPackets += 1
        connection.ends[side].queue.append(OutgoingACLPacket(data: packet.data, isStart: packet.packetBoundary.isStart))
        guard !connection.isLost else { return }
        if timing.modelsRadio {
            scheduleConnectionEventIfNeeded(connection)
        } else {
            while !connection.isLost, !connection.isClosed, let pdu = connection.takePDU(from: side) {
                deliver(pdu, on: connection, to: 1 - side)
                if pdu.completesHostPacket { completeHostPacket(on: connection, side: side, reportNow: true) }
            }
        }
    }

    /// Hands a received link-layer PDU to the receiving host, as one HCI packet per PDU or reassembled
    /// into whole L2CAP PDUs, depending on that controller's configuration.
    func deliver(_ pdu: LinkLayerPDU, on connection: LinkConnection, to side: Int) {
        // Fields, not a copy of the end: a copy would share its reassembly buffer and make every
        // append below copy it.
        guard !connection.ends[side].isDetached else { return }
        let handle = connection.ends[side].handle
        let c = controllers[connection.ends[side].controller]
        switch c.configuration.aclDelivery {
        case .linkLayerPDUs:
            // A PDU larger than the receiving controller's own ACL buffer goes up in buffer-sized pieces,
            // so no packet to the host is longer than what the controller told it (unlike bumble).
            let limit = max(Int(c.configuration.effectiveLEBuffer.packetLength), 1)
            var start = pdu.payload.startIndex
            repeat {
                let stop = min(start + limit, pdu.payload.endIndex)
                sendACL(to: c, handle: handle, isStart: pdu.isStart && start == pdu.payload.startIndex,
                        data: pdu.payload[start..<stop])
                start = stop
            } while start < pdu.payload.endIndex
        case .wholeL2CAPPDUs:
            // The HCI ACL packet is built in place: 4 header octets, then the L2CAP PDU as it arrives,
            // in a buffer sized once from the L2CAP length (one allocation per PDU).
            var buffer: [UInt8]
            if pdu.isStart {
                // An unfinished PDU followed by a new start was flushed by the sender: drop it.
                buffer = []
                buffer.reserveCapacity(ACLHeader.size + (Self.l2capPDULength(pdu.payload) ?? pdu.payload.count))
                buffer.append(contentsOf: repeatElement(0, count: ACLHeader.size))
            } else if connection.ends[side].reassembly.isEmpty {
                return sendACL(to: c, handle: handle, isStart: false, data: pdu.payload)
            } else {
                buffer = connection.ends[side].reassembly
            }
            connection.ends[side].reassembly = []
            buffer.append(contentsOf: pdu.payload)
            let received = buffer.count - ACLHeader.size
            guard received >= 2,
                  received >= Int(UInt16(buffer[ACLHeader.size]) | UInt16(buffer[ACLHeader.size + 1]) << 8) + 4
            else {
                connection.ends[side].reassembly = buffer
                return
            }
            // Packet boundary 0b10 (first automatically flushable), as sendACL does.
            let header = (handle & 0x0FFF) | UInt16(ACLPacketBoundaryFlag.firstFlushable.rawValue) << 12
            let length = UInt16(truncatingIfNeeded: received)
            buffer[0] = UInt8(truncatingIfNeeded: header)
            buffer[1] = UInt8(truncatingIfNeeded: header >> 8)
            buffer[2] = UInt8(truncatingIfNeeded: length)
            buffer[3] = UInt8(truncatingIfNeeded: length >> 8)
            c.send(HCIPacket(type: .acl, payload: buffer))
        }
    }

    /// The whole length (basic header included) of the L2CAP PDU starting `bytes`, once its length
    /// field has arrived.
    private static func l2capPDULength(_ bytes: ArraySlice<UInt8>) -> Int? {
        guard bytes.count >= 2 else { return nil }
        return Int(UInt16(bytes[bytes.startIndex]) | UInt16(bytes[bytes.startIndex + 1]) << 8) + 4
    }

    /// Controllers mark the first packet of a PDU "first automatically flushable" (0b10) on the way up.
    private func sendACL(to c: ControllerState, handle: UInt16, isStart: Bool, data: ArraySlice<UInt8>) {
        let packet = ACLPacket(handle: handle, packetBoundary: isStart ? .firstFlushable : .continuingFragment, data: data)
        c.send(HCIPacket(type: .acl, payload: packet.encode()))
    }

    /// A host packet has been sent completely: its buffer is free again, which the host learns from
    /// Number Of Completed Packets, at once or at the end of the connection event.
    func completeHostPacket(on connection: LinkConnection, side: Int, reportNow: Bool) {
        let end = connection.ends[side]
        connection.ends[side].unacknowledgedPackets -= 1
        guard !end.isDetached else { return }
        let c = controllers[end.controller]
        c.aclBuffersInUse -= 1
        if reportNow {
            sendNumberOfCompletedPackets(c, handle: end.handle, count: 1)
        } else {
            connection.ends[side].completedSinceReport += 1
        }
        if let remaining = c.faults.dropLinkAfterACLPackets {
            if remaining <= 1 {
                c.faults.dropLinkAfterACLPackets = nil
                loseLink(connection)
            } else {
                c.faults.dropLinkAfterACLPackets = remaining - 1
            }
        }
    }

    func sendNumberOfCompletedPackets(_ c: ControllerState, handle: UInt16, count: Int) {
        // Number Of Completed Packets cannot be masked (Core Vol 4 Part E §7.3.1): sent directly, the
        // event built in one array (it is on every ACL packet's path).
        let completed = UInt16(clamping: count)
        c.send(HCIPacket(type: .event, payload: [
            EventCode.numberOfCompletedPackets, 5, 1,
            UInt8(truncatingIfNeeded: handle), UInt8(truncatingIfNeeded: handle >> 8),
            UInt8(truncatingIfNeeded: completed), UInt8(truncatingIfNeeded: completed >> 8),
        ]))
    }
}
