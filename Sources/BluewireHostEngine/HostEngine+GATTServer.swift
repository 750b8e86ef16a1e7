import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireL2CAP

extension HostEngine {
    /// A request from a peer's client, answered by the GATT server.
    mutating func serverRequest(_ pdu: ATTPDU, handle: UInt16) {
        guard let mtu = links[handle]?.bearer.mtu else { return }
        // A client may send no PDU longer than ATT_MTU (Core Vol 3 Part F §3.2.8): Invalid PDU.
        let response = pdu.encode().count > mtu
            ? .errorResponse(requestOpcode: pdu.opcode, handle: 0, error: .invalidPDU)
            : server.respond(to: pdu, from: handle)
            ?? .errorResponse(requestOpcode: pdu.opcode, handle: 0, error: .requestNotSupported)
        try? links[handle]?.bearer.respond(response)
        publishServerEvents()
        observeServerResponse(to: pdu, response: response, on: handle)
    }

    mutating func publishServerEvents() {
        for event in server.takeEvents() {
            // The bearer reports MTU changes itself.
            if case .mtuExchanged = event { continue }
            emit(.server(event))
        }
        // An unsubscription ends a notification stream; an MTU change lengthens its values.
        pumpATTStreams()
    }

    /// Handle Value Notification (§3.4.7.1) to every subscribed central, or one.
    mutating func notify(_ id: HostRequestID, _ valueHandle: UInt16, _ value: [UInt8], _ connection: UInt16?) {
        if let connection { return notifyOne(id, valueHandle, value, connection) }
        let pdus: [GATTOutboundPDU]
        do throws(GATTServerError) {
            pdus = try server.notify(handle: valueHandle, value: value)
        } catch {
            return complete(id, .failure(.server(error)))
        }
        var notified: [UInt16] = []
        for pdu in pdus {
            guard let index = links.index(forKey: pdu.connection) else { continue }
            // The server built the PDU for this link's MTU: sent as it is.
            guard (try? links.values[index].bearer.notify(encoded: pdu.bytes)) != nil else { continue }
            notified.append(pdu.connection)
            drainBearer(handle: pdu.connection)
        }
        complete(id, .success(.notified(notified)))
    }

    /// Several values to one central, packed as its client allows (`GATTServer.notifyMultiple`).
    mutating func notifyMultiple(_ id: HostRequestID, _ values: [GATTHandleValue], _ connection: UInt16) {
        guard let index = links.index(forKey: connection), !links.values[index].bearer.isClosed else {
            return complete(id, .success(.notified([])))
        }
        let pdus: [GATTOutboundPDU]
        do throws(GATTServerError) {
            pdus = try server.notifyMultiple(values, to: connection)
        } catch {
            return complete(id, .failure(.server(error)))
        }
        var sent = false
        for pdu in pdus where (try? links.values[index].bearer.notify(encoded: pdu.bytes)) != nil { sent = true }
        drainBearer(handle: connection)
        complete(id, .success(.notified(sent ? [connection] : [])))
    }

    /// The hot path (a sensor streaming to one central): the same checks as the server's
    /// (notify property, CCCD, subscription, MTU), then the L2CAP frame is built once, straight
    /// from the value, and handed to the ACL queue.
    mutating func notifyOne(_ id: HostRequestID, _ valueHandle: UInt16, _ value: [UInt8], _ connection: UInt16) {
        guard let characteristic = server.database.characteristic(valueHandle: valueHandle) else {
            return complete(id, .failure(.server(.notCharacteristicValue(valueHandle))))
        }
        guard characteristic.properties.contains(.notify), characteristic.clientConfigurationHandle != nil else {
            return complete(id, .failure(.server(.notSupportedByCharacteristic(valueHandle))))
        }
        guard let index = links.index(forKey: connection), !links.values[index].bearer.isClosed,
              server.subscription(connection: connection, valueHandle: valueHandle).notifications else {
            return complete(id, .success(.notified([])))
        }
        let part = value.prefix(links.values[index].bearer.mtu - 3)
        let frameLength = 7 + part.count
        if frameLength <= fragmenter.bufferSize {
            // The usual case: the whole frame in one packet, written straight into its wire form.
            var packet = L2CAPFragmenter.wirePacketWriter(handle: connection, isFirst: true, dataLength: frameLength)
            Self.appendNotificationFrame(valueHandle, part, into: &packet)
            aclCredits.enqueue(handle: connection, ACLWirePacket(encoded: packet.bytes))
            pumpACL()
        } else {
            var frame = ByteWriter(capacity: frameLength)
            Self.appendNotificationFrame(valueHandle, part, into: &frame)
            sendL2CAPFrame(handle: connection, frame: frame.bytes[...])
        }
        complete(id, .success(.notified([connection])))
    }

    /// The L2CAP frame of a Handle Value Notification (Core Vol 3 Part F §3.4.7.1) on the ATT fixed
    /// channel (Vol 3 Part A §2.1): length, CID 0x0004, opcode, handle, value.
    static func appendNotificationFrame(_ valueHandle: UInt16, _ value: ArraySlice<UInt8>, into w: inout ByteWriter) {
        w.append(UInt16(truncatingIfNeeded: 3 + value.count))
        w.append(L2CAPChannelID.att.rawValue)
        w.append(ATTOpcode.handleValueNotification.rawValue)
        w.append(valueHandle)
        w.append(contentsOf: value)
    }

    /// Handle Value Indication (§3.4.7.2) to one central; completes on its confirmation. Fails at
    /// once when the central is not subscribed to indications (`.server(.notSupportedByCharacteristic)`)
    /// or its queue is full (`.indicationQueueFull`, the value dropped).
    mutating func indicate(_ id: HostRequestID, _ valueHandle: UInt16, _ value: [UInt8], _ connection: UInt16) {
        guard links.index(forKey: connection) != nil else { return complete(id, .failure(.unknownConnection(connection))) }
        let queuedBefore = server.queuedIndicationCount(for: connection)
        let pdus: [GATTOutboundPDU]
        do throws(GATTServerError) {
            pdus = try server.indicate(handle: valueHandle, value: value, to: connection)
        } catch {
            return complete(id, .failure(.server(error)))
        }
        publishServerEvents()
        guard let pdu = pdus.first else {
            if server.queuedIndicationCount(for: connection) > queuedBefore {
                // Queued behind the outstanding indication: sent when the confirmation comes.
                links[connection]?.indicationRequests.append((ATTIndicationID(rawValue: 0), id))
            } else if server.subscription(connection: connection, valueHandle: valueHandle).indications {
                complete(id, .failure(.indicationQueueFull))
            } else {
                complete(id, .failure(.server(.notSupportedByCharacteristic(valueHandle))))
            }
            return
        }
        sendIndication(pdu, request: id)
    }

    mutating func sendIndication(_ pdu: GATTOutboundPDU, request: HostRequestID?) {
        guard pdu.bytes.count >= 3 else { return }
        let attribute = UInt16(pdu.bytes[1]) | UInt16(pdu.bytes[2]) << 8
        do throws(ATTBearerError) {
            guard let indication = try links[pdu.connection]?.bearer.indicate(
                handle: attribute, value: pdu.bytes.dropFirst(3), now: now) else { return }
            // By index: `links[handle]?.indicationRequests` reads a copy of the whole link.
            if let link = links.index(forKey: pdu.connection) {
                if let request { links.values[link].indicationRequests.append((indication, request)) }
                else if let index = links.values[link].indicationRequests.firstIndex(where: { $0.0.rawValue == 0 }) {
                    // A queued request's indication goes out now.
                    links.values[link].indicationRequests[index].0 = indication
                }
            }
        } catch {
            if let request { complete(request, .failure(.att(error))) }
        }
        drainBearer(handle: pdu.connection)
    }

    mutating func serverIndicationConfirmed(_ id: ATTIndicationID, handle: UInt16) {
        indicationFinished(id, .success(.done), handle: handle)
        let queuedBefore = server.queuedIndicationCount(for: handle)
        let next = server.confirm(connection: handle)
        // The server skips queued values whose central unsubscribed meanwhile: their requests,
        // first in line, end unsent.
        let skipped = queuedBefore - server.queuedIndicationCount(for: handle) - (next == nil ? 0 : 1)
        publishServerEvents()
        for _ in 0..<max(0, skipped) { indicationFinished(ATTIndicationID(rawValue: 0), .failure(.unsubscribed), handle: handle) }
        if let next { sendIndication(next, request: nil) }
    }

    mutating func indicationFinished(_ id: ATTIndicationID, _ result: Result<HostCompletion, HostEngineError>, handle: UInt16) {
        // By index: `links[handle]?.indicationRequests` reads a copy of the whole link.
        guard let link = links.index(forKey: handle),
              let index = links.values[link].indicationRequests.firstIndex(where: { $0.0 == id }) else { return }
        let request = links.values[link].indicationRequests.remove(at: index).1
        complete(request, result)
    }
}
