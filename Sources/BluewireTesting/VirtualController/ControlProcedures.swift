import BluewireCore

/// The outcome of each link-layer control procedure, on both sides of the connection.
extension LinkWorld {
    func complete(_ procedure: ControlProcedure, on connection: LinkConnection) {
        guard !connection.isClosed else { return }
        switch procedure {
        case .connectionUpdate(let initiator, let interval, let latency, let timeout):
            completeConnectionUpdate(connection, initiator: initiator, interval: interval, latency: latency, timeout: timeout)
        case .dataLengthUpdate:
            completeDataLengthUpdate(connection)
        case .phyUpdate(let initiator, let all, let tx, let rx):
            completePHYUpdate(connection, initiator: initiator, allPHYs: all, txPHYs: tx, rxPHYs: rx)
        case .remoteVersion(let requester):
            guard let c = controller(of: connection, side: requester) else { return }
            let peer = controllers[connection.ends[1 - requester].controller].configuration
            var out: [UInt8] = [Status.success]
            out.appendLE(connection.ends[requester].handle)
            out.append(peer.hciVersion)
            out.appendLE(peer.companyIdentifier)
            out.appendLE(peer.lmpSubversion)
            c.sendEvent(EventCode.readRemoteVersionInformationComplete, out)
        case .remoteFeatures(let requester):
            guard let c = controller(of: connection, side: requester) else { return }
            let peer = controllers[connection.ends[1 - requester].controller]
            // A peripheral may start the feature exchange only if both sides support doing so.
            let allowed = requester == 0
                || (c.supports.contains(.peripheralInitiatedFeaturesExchange)
                    && peer.supports.contains(.peripheralInitiatedFeaturesExchange))
            var out: [UInt8] = [allowed ? Status.success : Status.unsupportedRemoteFeature]
            out.appendLE(connection.ends[requester].handle)
            let features = allowed ? peer.supports.rawValue : 0
            for shift in stride(from: UInt64(0), to: 64, by: 8) { out.append(UInt8(truncatingIfNeeded: features >> shift)) }
            c.sendLEMeta(LESubevent.readRemoteFeaturesComplete, out)
        case .encryptionStart:
            requestLongTermKey(on: connection)
        case .encryptionResponse(let key):
            completeEncryption(on: connection, peripheralKey: key)
        case .terminate(let initiator, let reason):
            var reasons = [reason, reason]
            reasons[initiator] = Status.localHostTerminated
            close(connection, reasons: reasons)
        }
    }

    /// The controller of a side still attached to its host.
    func controller(of connection: LinkConnection, side: Int) -> ControllerState? {
        connection.ends[side].isDetached ? nil : controllers[connection.ends[side].controller]
    }

    /// LE Connection Update Complete goes to the host that asked, always, and to the other host only if
    /// the parameters changed (Core Vol 4 Part E §7.7.65.3).
    private func completeConnectionUpdate(
        _ connection: LinkConnection, initiator: Int, interval: UInt16, latency: UInt16, timeout: UInt16
    ) {
        let changed = (interval, latency, timeout) != (connection.interval, connection.latency, connection.supervisionTimeout)
        connection.interval = interval
        connection.latency = latency
        connection.supervisionTimeout = timeout
        // The new interval counts from the event in which the update took effect.
        connection.anchor = (connection.eventStart ?? now) + connection.intervalSpan
        for side in 0..<2 where side == initiator || changed {
            guard let c = controller(of: connection, side: side) else { continue }
            var out: [UInt8] = [Status.success]
            out.appendLE(connection.ends[side].handle)
            out.appendLE(interval)
            out.appendLE(latency)
            out.appendLE(timeout)
            c.sendLEMeta(LESubevent.connectionUpdateComplete, out)
        }
    }

    /// Each direction gets min(sender's connMaxTxOctets, receiver's connMaxRxOctets); each side whose
    /// values changed hears LE Data Length Change (Core Vol 6 Part B §4.5.10).
    private func completeDataLengthUpdate(_ connection: LinkConnection) {
        let before = connection.ends.map(\.effectiveTxOctets)
        for side in 0..<2 {
            let tx = min(connection.ends[side].maxTxOctets, connection.ends[1 - side].maxRxOctets)
            connection.ends[side].effectiveTxOctets = max(tx, 27)
        }
        guard connection.ends.map(\.effectiveTxOctets) != before else { return }
        for side in 0..<2 {
            guard let c = controller(of: connection, side: side) else { continue }
            let tx = connection.ends[side].effectiveTxOctets
            let rx = connection.ends[1 - side].effectiveTxOctets
            var out: [UInt8] = []
            out.appendLE(connection.ends[side].handle)
            out.appendLE(tx)
            out.appendLE(Self.maxTime(octets: tx))
            out.appendLE(rx)
            out.appendLE(Self.maxTime(octets: rx))
            c.sendLEMeta(LESubevent.dataLengthChange, out)
        }
    }

    /// Chooses each direction's PHY from what the requesting host allows, what the peer's host set as its
    /// default preference and what both controllers support, preferring 2M, then 1M, then Coded. LE PHY
    /// Update Complete goes to the requesting host always and to the peer's only if a PHY changed
    /// (Core Vol 4 Part E §7.7.65.12).
    private func completePHYUpdate(_ connection: LinkConnection, initiator: Int, allPHYs: UInt8, txPHYs: UInt8, rxPHYs: UInt8) {
        let local = controllers[connection.ends[initiator].controller]
        let peer = controllers[connection.ends[1 - initiator].controller]
        let common = local.supportedPHYMask & peer.supportedPHYMask
        let localTx = allPHYs & 0x01 != 0 ? 0x07 : txPHYs
        let localRx = allPHYs & 0x02 != 0 ? 0x07 : rxPHYs
        let peerTx = peer.defaultPHYs.all & 0x01 != 0 ? 0x07 : peer.defaultPHYs.tx
        let peerRx = peer.defaultPHYs.all & 0x02 != 0 ? 0x07 : peer.defaultPHYs.rx
        func choose(_ candidates: UInt8, current: UInt8) -> UInt8 {
            if candidates & 0x02 != 0 { return PHY.le2M }
            if candidates & 0x01 != 0 { return PHY.le1M }
            if candidates & 0x04 != 0 { return PHY.leCoded }
            return current
        }
        let before = (connection.ends[0].txPHY, connection.ends[1].txPHY)
        connection.ends[initiator].txPHY = choose(localTx & peerRx & common, current: connection.ends[initiator].txPHY)
        connection.ends[1 - initiator].txPHY = choose(localRx & peerTx & common, current: connection.ends[1 - initiator].txPHY)
        let changed = before != (connection.ends[0].txPHY, connection.ends[1].txPHY)
        for side in 0..<2 where side == initiator || changed {
            guard let c = controller(of: connection, side: side) else { continue }
            var out: [UInt8] = [Status.success]
            out.appendLE(connection.ends[side].handle)
            out.append(connection.ends[side].txPHY)
            out.append(connection.ends[1 - side].txPHY)
            c.sendLEMeta(LESubevent.phyUpdateComplete, out)
        }
    }
}
