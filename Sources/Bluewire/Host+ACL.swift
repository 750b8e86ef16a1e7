import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireL2CAP

extension BluetoothHost {
    /// ACL data from the controller: reassemble L2CAP and route by channel (Core Vol 3 Part A §2.1).
    func receiveACL(_ payload: ArraySlice<UInt8>) {
        let packet: ACLPacket
        do throws(DecodeError) {
            packet = try ACLPacket(decoding: payload)
        } catch {
            log.l2cap.warning("malformed ACL packet dropped: \(error)")
            return
        }
        let result = reassembler.receive(packet)
        if let error = result.error { log.l2cap.warning("L2CAP reassembly: \(error)") }
        guard let pdu = result.pdu else { return }
        guard links[pdu.handle] != nil else {
            log.l2cap.debug("ACL on unknown handle 0x\(hex(pdu.handle, width: 4)) dropped")
            return
        }
        switch pdu.channelID {
        case .att:
            links[pdu.handle]?.bearer.receive(pdu.payload, now: now)
            drainBearer(handle: pdu.handle)
        case .leSignaling:
            receiveSignaling(handle: pdu.handle, payload: pdu.payload)
        case .smp:
            // No pairing support yet: answer Pairing Failed, Pairing Not Supported (Core Vol 3 Part H §3.5.5).
            if pdu.payload.first == 0x01 || pdu.payload.first == 0x0B {
                sendL2CAP(handle: pdu.handle, channel: .smp, payload: [0x05, 0x05])
            }
        default:
            log.l2cap.debug("PDU on unsupported channel \(pdu.channelID) dropped")
        }
    }

    func receiveSignaling(handle: UInt16, payload: ArraySlice<UInt8>) {
        guard let link = links[handle] else { return }
        let output = link.signaling.receive(payload)
        if let reply = output.reply { sendL2CAP(handle: handle, channel: .leSignaling, payload: reply.encode()) }
        if case .updateConnectionParameters(let parameters)? = output.event {
            log.l2cap.debug("peer asked for connection parameters \(parameters)")
            let update = LEConnectionUpdate(connectionHandle: handle, connection: LEConnectionParameters(
                connectionIntervalMin: parameters.intervalMin, connectionIntervalMax: parameters.intervalMax,
                maxLatency: parameters.latency, supervisionTimeout: parameters.timeoutMultiplier))
            enqueueProcedure { host in _ = await host.sendCommandResult(.leConnectionUpdate(update)) }
        }
    }

    /// Fragments an L2CAP PDU to the controller's buffer size and queues it behind the ACL credits.
    func sendL2CAP(handle: UInt16, channel: L2CAPChannelID, payload: [UInt8]) {
        let fragments = fragmenter.fragment(handle: handle, channelID: channel, payload: payload[...])
        aclCredits.enqueue(handle: handle, fragments)
        pumpACL()
    }

    /// Sends every queued ACL fragment the controller has buffers for (credits come back with
    /// Number Of Completed Packets, Core Vol 4 Part E §4.1.1).
    func pumpACL() {
        while let packet = aclCredits.nextPacketToSend() {
            write(HCIPacket(type: .acl, payload: packet.encode()))
        }
        resumeACLQueueWaiters()
    }

    /// Sends what the ATT bearer produced and handles its events.
    func drainBearer(handle: UInt16) {
        guard let link = links[handle] else { return }
        // A notification changes no deadline: the timer is looked at only after anything else.
        var deadlinesMayHaveChanged = false
        while let output = link.bearer.nextOutput() {
            switch output {
            case .send(let bytes):
                deadlinesMayHaveChanged = true
                sendL2CAP(handle: handle, channel: .att, payload: bytes)
            case .event(let event):
                if case .notification = event {} else { deadlinesMayHaveChanged = true }
                handleBearerEvent(event, on: link)
            }
        }
        if deadlinesMayHaveChanged { rescheduleTimer() }
    }

    func handleBearerEvent(_ event: ATTBearerEvent, on link: Link) {
        switch event {
        case .response(let id, let pdu):
            link.requestWaiters.removeValue(forKey: id)?.resume(returning: .success(pdu))
        case .requestFailed(let id, let error):
            link.requestWaiters.removeValue(forKey: id)?.resume(returning: .failure(error == .disconnected ? .disconnected(.connectionTerminatedByLocalHost) : .att(error)))
        case .notification(let handle, let value):
            deliver(GATTNotification(handle: handle, value: value, isIndication: false), on: link)
        case .multipleNotification(let notification):
            for entry in notification.entries {
                deliver(GATTNotification(handle: entry.handle, value: entry.value, isIndication: false), on: link)
            }
        case .indication(let handle, let value):
            deliver(GATTNotification(handle: handle, value: value, isIndication: true), on: link)
        case .request(let pdu):
            // A client may send no PDU longer than ATT_MTU (Core Vol 3 Part F §3.2.8); like the GATT
            // server's byte entry point, answer one with Invalid PDU instead of acting on it.
            let response = pdu.encode().count > link.bearer.mtu
                ? .errorResponse(requestOpcode: pdu.opcode, handle: 0, error: .invalidPDU)
                : gattServer.respond(to: pdu, from: link.handle)
                ?? .errorResponse(requestOpcode: pdu.opcode, handle: 0, error: .requestNotSupported)
            do throws(ATTBearerError) {
                try link.bearer.respond(response)
            } catch {
                log.att.warning("could not answer \(pdu.opcode): \(error)")
            }
            publishServerEvents()
            observeServerResponse(to: pdu, response: response, on: link.handle)
        case .command(let pdu):
            _ = gattServer.respond(to: pdu, from: link.handle)
            publishServerEvents()
        case .indicationConfirmed(let id):
            // Also sends the next indication the server queued for this central.
            serverIndicationConfirmed(on: link)
            link.indicationWaiters.removeValue(forKey: id)?.resume(returning: .success(()))
        case .indicationFailed(let id, let error):
            link.indicationWaiters.removeValue(forKey: id)?.resume(returning: .failure(.att(error)))
        case .mtuChanged(let mtu):
            gattServer.setMTU(mtu, for: link.handle)
            publishServerEvents()
            publish(.mtuChanged(handle: link.handle, mtu: mtu))
        case .unexpectedPDU(let opcode):
            log.att.debug("unexpected \(opcode) dropped")
        case .malformedPDU(let error):
            log.att.warning("malformed ATT PDU: \(error)")
        case .closed(let reason):
            log.att.warning("ATT bearer closed: \(reason)")
            if case .transactionTimeout = reason {
                // Core Vol 3 Part F §3.3.3: after a transaction timeout no more ATT on this bearer; drop the link.
                disconnectLater(handle: link.handle)
            }
        }
    }

    func deliver(_ notification: GATTNotification, on link: Link) {
        // Service Changed (Core Vol 3 Part G §7.1) must invalidate the client's cache before anyone
        // acts on the indication.
        if notification.isIndication, let client = link.gattClient { client.indicationReceived(notification) }
        if let sinks = link.notificationSinks[notification.handle] {
            for sink in sinks.values { sink.deliver(notification) }
        }
        if let subscribers = link.notificationSubscribers[notification.handle] {
            for continuation in subscribers.values { continuation.yield(notification) }
        }
        for continuation in link.allNotificationSubscribers.values { continuation.yield(notification) }
    }
}
