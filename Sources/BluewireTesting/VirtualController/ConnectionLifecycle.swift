import BluewireCore

/// Connections coming into being, ending, and being lost.
extension LinkWorld {
    /// The initiator's CONNECT_IND reached the advertiser: both sides get their connection complete
    /// event, the advertiser stops advertising (and an extended set reports Advertising Set Terminated).
    func establishConnection(
        initiator: ControllerState, initiatorAddress: BluetoothAddress, advertiser: ControllerState, handle: UInt8,
        advertiserAddress: BluetoothAddress
    ) {
        guard let request = initiator.initiator, let set = advertiser.advertisingSets[handle],
            let centralHandle = initiator.allocateHandle(), let peripheralHandle = advertiser.allocateHandle()
        else { return }
        initiator.initiator = nil
        stopAdvertising(advertiser, handle: handle)

        let id = nextConnectionID
        nextConnectionID += 1
        func end(_ c: ControllerState, handle: UInt16, address: BluetoothAddress) -> ConnectionEnd {
            let dle = c.supports.contains(.dataPacketLengthExtension)
            return ConnectionEnd(
                controller: c.index, handle: handle, address: address,
                maxTxOctets: dle ? min(c.suggestedMaxTxOctets, c.configuration.supportedMaxOctets) : 27,
                maxRxOctets: dle ? c.configuration.supportedMaxOctets : 27)
        }
        let csa2 = initiator.supports.contains(.channelSelectionAlgorithm2) && advertiser.supports.contains(.channelSelectionAlgorithm2)
        // The first connection event follows the 1.25 ms transmit window delay (Core Vol 6 Part B §4.5.3).
        let connection = LinkConnection(
            id: id, central: end(initiator, handle: centralHandle, address: initiatorAddress),
            peripheral: end(advertiser, handle: peripheralHandle, address: advertiserAddress),
            interval: request.connectionIntervalMin, latency: request.maxLatency,
            supervisionTimeout: request.supervisionTimeout, usesChannelSelectionAlgorithm2: csa2,
            anchor: now + .microseconds(Units.connectionInterval))
        connections[id] = connection
        initiator.connections[centralHandle] = id
        advertiser.connections[peripheralHandle] = id
        initiator.lateACLAllowance[centralHandle] = nil
        advertiser.lateACLAllowance[peripheralHandle] = nil

        // Each side reports the peer by its identity when its resolving list resolves the peer's private
        // address (type 0x02/0x03, the private address in Peer_Resolvable_Private_Address).
        let advertiserIdentity = resolve(advertiserAddress, by: initiator)
        let initiatorIdentity = resolve(initiatorAddress, by: advertiser)
        sendConnectionComplete(
            initiator, status: Status.success, handle: centralHandle, role: 0, peer: advertiserIdentity ?? advertiserAddress,
            peerResolvablePrivateAddress: advertiserIdentity == nil ? nil : advertiserAddress,
            interval: connection.interval, latency: connection.latency, timeout: connection.supervisionTimeout,
            clockAccuracy: 0)
        sendChannelSelectionAlgorithm(initiator, handle: centralHandle, csa2: csa2)
        sendConnectionComplete(
            advertiser, status: Status.success, handle: peripheralHandle, role: 1, peer: initiatorIdentity ?? initiatorAddress,
            peerResolvablePrivateAddress: initiatorIdentity == nil ? nil : initiatorAddress,
            interval: connection.interval, latency: connection.latency, timeout: connection.supervisionTimeout,
            clockAccuracy: initiator.configuration.centralClockAccuracy)
        sendChannelSelectionAlgorithm(advertiser, handle: peripheralHandle, csa2: csa2)
        if advertiser.commandFamily == .extended {
            sendAdvertisingSetTerminated(advertiser, status: Status.success, set: set, connectionHandle: peripheralHandle)
        }

        // A controller whose suggested data length is above the default starts the data length update
        // procedure by itself (Core Vol 6 Part B §4.5.10).
        if connection.ends.contains(where: { $0.maxTxOctets != 27 }) {
            start(.dataLengthUpdate, on: connection)
        }
    }

    /// LE Enhanced Connection Complete if the host unmasked it, else LE Connection Complete
    /// (Core Vol 4 Part E §7.7.65.10: only the enhanced one is sent when both are unmasked).
    func sendConnectionComplete(
        _ c: ControllerState, status: UInt8, handle: UInt16, role: UInt8, peer: BluetoothAddress,
        peerResolvablePrivateAddress: BluetoothAddress? = nil, interval: UInt16,
        latency: UInt16, timeout: UInt16, clockAccuracy: UInt8
    ) {
        let enhanced = c.isLEEventEnabled(LESubevent.enhancedConnectionComplete)
        var out: [UInt8] = [status]
        out.appendLE(handle)
        out.append(role)
        out.append(hciAddressType(peer))
        out.appendAddress(peer)
        if enhanced {
            // This controller makes no private addresses of its own: Local_Resolvable_Private_Address is zero.
            out.append(contentsOf: [UInt8](repeating: 0, count: 6))
            if let peerResolvablePrivateAddress {
                out.appendAddress(peerResolvablePrivateAddress)
            } else {
                out.append(contentsOf: [UInt8](repeating: 0, count: 6))
            }
        }
        out.appendLE(interval)
        out.appendLE(latency)
        out.appendLE(timeout)
        out.append(clockAccuracy)
        c.sendLEMeta(enhanced ? LESubevent.enhancedConnectionComplete : LESubevent.connectionComplete, out)
    }

    func sendChannelSelectionAlgorithm(_ c: ControllerState, handle: UInt16, csa2: Bool) {
        var out: [UInt8] = []
        out.appendLE(handle)
        out.append(csa2 ? 0x01 : 0x00)
        c.sendLEMeta(LESubevent.channelSelectionAlgorithm, out)
    }

    /// Ends a connection: each remaining side's host gets Disconnection Complete with its reason, the
    /// handles are freed, and so are the buffers of packets that will never be sent (the host frees
    /// them too when it sees the event, Core Vol 4 Part E §4.3).
    ///
    /// A host cannot know the handle is gone before it reads the event, so ACL packets on it may
    /// still arrive: those already on their way, and those the host sends before the event reaches
    /// it. A controller drops them (bumble's does, with a warning). How many there can be is bounded
    /// by flow control: every one of them holds a buffer credit the host had not seen come back, and
    /// the host can hold no more than the buffers this controller did not have in use when the link
    /// ended. That many late packets are dropped quietly (`lateACLPackets`); one more means the host
    /// went on sending after it saw the event, or overran its credits, and is a violation.
    func close(_ connection: LinkConnection, reasons: [UInt8]) {
        guard !connection.isClosed else { return }
        connection.isClosed = true
        connection.generation &+= 1
        connections[connection.id] = nil
        for side in 0..<2 where !connection.ends[side].isDetached {
            let end = connection.ends[side]
            let c = controllers[end.controller]
            c.connections[end.handle] = nil
            c.lateACLAllowance[end.handle] = Int(c.configuration.effectiveLEBuffer.packetCount) - c.aclBuffersInUse
            c.aclBuffersInUse -= end.unacknowledgedPackets
            var out: [UInt8] = [Status.success]
            out.appendLE(end.handle)
            out.append(reasons[side])
            c.sendEvent(EventCode.disconnectionComplete, out)
        }
    }

    /// The radio link is gone without a goodbye (a reset peer, an injected fault): nothing more is
    /// delivered and both sides find out when the supervision timeout expires.
    func loseLink(_ connection: LinkConnection) {
        guard !connection.isLost, !connection.isClosed else { return }
        connection.isLost = true
        // What was sent before the loss was sent: report it.
        reportCompletedPackets(connection)
        connection.generation &+= 1
        connection.procedures = []
        connection.inFlight = nil
        connection.eventStart = nil
        connection.isEventScheduled = false
        schedule(at: now + connection.supervisionTimeoutSpan, .supervisionTimeout(connection: connection.id))
    }
}
