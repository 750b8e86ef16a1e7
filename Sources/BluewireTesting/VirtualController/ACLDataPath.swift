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
            return c.record(.aclUnknownHandle(handle: packet.handle))
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
        let end = connection.ends[side]
        guard !end.isDetached else { return }
        let c = controllers[end.controller]
        switch c.configuration.aclDelivery {
        case .linkLayerPDUs:
            // A PDU larger than the receiving controller's own ACL buffer goes up in buffer-sized pieces,
            // so no packet to the host is longer than what the controller told it (unlike bumble).
            let limit = max(Int(c.configuration.effectiveLEBuffer.packetLength), 1)
            var start = pdu.payload.startIndex
            repeat {
                let stop = min(start + limit, pdu.payload.endIndex)
                sendACL(to: c, handle: end.handle, isStart: pdu.isStart && start == pdu.payload.startIndex,
                        data: pdu.payload[start..<stop])
                start = stop
            } while start < pdu.payload.endIndex
        case .wholeL2CAPPDUs:
            if pdu.isStart {
                // An unfinished PDU followed by a new start was flushed by the sender: drop it.
                connection.ends[side].reassembly = Array(pdu.payload)
            } else if connection.ends[side].reassembly.isEmpty {
                return sendACL(to: c, handle: end.handle, isStart: false, data: pdu.payload)
            } else {
                connection.ends[side].reassembly.append(contentsOf: pdu.payload)
            }
            let buffer = connection.ends[side].reassembly
            guard buffer.count >= 4 else { return }
            let expected = Int(UInt16(buffer[0]) | UInt16(buffer[1]) << 8) + 4
            guard buffer.count >= expected else { return }
            connection.ends[side].reassembly = []
            sendACL(to: c, handle: end.handle, isStart: true, data: buffer[...])
        }
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
        var out: [UInt8] = [1]
        out.appendLE(handle)
        out.appendLE(UInt16(clamping: count))
        c.sendEvent(EventCode.numberOfCompletedPackets, out)
    }
}
