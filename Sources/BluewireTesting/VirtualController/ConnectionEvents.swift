import BluewireCore

/// The radio timing model of a connection: connection events on the interval grid, each a series of
/// exchanges (central PDU, T_IFS, peripheral PDU, T_IFS) until nothing is left, the exchange limit is
/// reached or the next anchor would be overrun (Core Vol 6 Part B §4.5.1).
extension LinkWorld {
    /// Payload octets of the LL control PDUs that carry a procedure (opcode and parameters; LL_LENGTH_REQ
    /// and LL_CONNECTION_UPDATE_IND are of this order).
    static let controlPDUPayload = 9

    func scheduleConnectionEventIfNeeded(_ connection: LinkConnection) {
        guard timing.modelsRadio, !connection.isEventScheduled, connection.eventStart == nil, !connection.isLost,
            !connection.isClosed, connection.hasWork
        else { return }
        connection.isEventScheduled = true
        schedule(at: nextAnchor(connection), .connectionEventStep(connection: connection.id, generation: connection.generation))
    }

    /// The first anchor point at or after now, and after the last event that started.
    func nextAnchor(_ connection: LinkConnection) -> MonotonicInstant {
        let interval = connection.intervalSpan.microseconds
        let anchor = connection.anchor.microseconds
        var candidate = anchor
        if now.microseconds > anchor {
            candidate = anchor + (now.microseconds - anchor + interval - 1) / interval * interval
        }
        if let last = connection.lastEventStart?.microseconds, candidate <= last {
            candidate += ((last - candidate) / interval + 1) * interval
        }
        return MonotonicInstant(microseconds: candidate)
    }

    /// Runs at an anchor point (a new event) and at the end of every exchange.
    func connectionEventStep(_ connection: LinkConnection) {
        connection.isEventScheduled = false
        if let flight = connection.inFlight {
            connection.inFlight = nil
            let reportNow = timing.completedPacketsReporting == .asPacketsComplete
            if let pdu = flight.central {
                deliver(pdu, on: connection, to: 1)
                if pdu.completesHostPacket { completeHostPacket(on: connection, side: 0, reportNow: reportNow) }
            }
            if let pdu = flight.peripheral, !connection.isLost {
                deliver(pdu, on: connection, to: 0)
                if pdu.completesHostPacket { completeHostPacket(on: connection, side: 1, reportNow: reportNow) }
            }
            if let procedure = flight.procedure, !connection.isLost { complete(procedure, on: connection) }
            if connection.isLost || connection.isClosed { return }
        }
        if connection.eventStart == nil {
            connection.eventStart = now
            connection.lastEventStart = now
            connection.exchangesInEvent = 0
        }
        if let duration = nextExchangeDuration(connection) {
            startExchange(connection)
            connection.exchangesInEvent += 1
            schedule(at: now + duration, .connectionEventStep(connection: connection.id, generation: connection.generation))
            return
        }
        endConnectionEvent(connection)
    }

    /// How long the next exchange would take, or nil if the event should close instead.
    private func nextExchangeDuration(_ connection: LinkConnection) -> TimeSpan? {
        guard connection.hasWork, let eventStart = connection.eventStart,
            connection.exchangesInEvent < (timing.maxExchangesPerConnectionEvent ?? Int.max)
        else { return nil }
        let sizes: (Int, Int)
        if connection.procedures.isEmpty {
            sizes = (nextPDUSize(connection, side: 0), nextPDUSize(connection, side: 1))
        } else {
            sizes = (Self.controlPDUPayload, Self.controlPDUPayload)
        }
        let ifs = timing.interFrameSpace
        let duration = VirtualLink.Timing.airTime(payload: sizes.0, phy: connection.ends[0].txPHY) + ifs
            + VirtualLink.Timing.airTime(payload: sizes.1, phy: connection.ends[1].txPHY) + ifs
        // The first exchange always happens; later ones only if they end before the next anchor.
        guard connection.exchangesInEvent == 0 || now + duration <= eventStart + connection.intervalSpan else { return nil }
        return duration
    }

    private func nextPDUSize(_ connection: LinkConnection, side: Int) -> Int {
        guard let packet = connection.ends[side].queue.first else { return 0 }
        return min(Int(connection.ends[side].effectiveTxOctets), packet.data.count - packet.sentOctets)
    }

    private func startExchange(_ connection: LinkConnection) {
        if !connection.procedures.isEmpty {
            connection.inFlight = (nil, nil, connection.procedures.removeFirst())
        } else {
            connection.inFlight = (connection.takePDU(from: 0), connection.takePDU(from: 1), nil)
        }
    }

    /// Closes the event: packets completed in it and not yet reported are reported in one Number Of
    /// Completed Packets per side.
    private func endConnectionEvent(_ connection: LinkConnection) {
        connection.eventStart = nil
        reportCompletedPackets(connection)
        scheduleConnectionEventIfNeeded(connection)
    }

    func reportCompletedPackets(_ connection: LinkConnection) {
        for side in 0..<2 where connection.ends[side].completedSinceReport > 0 {
            let end = connection.ends[side]
            connection.ends[side].completedSinceReport = 0
            guard !end.isDetached else { continue }
            sendNumberOfCompletedPackets(controllers[end.controller], handle: end.handle, count: end.completedSinceReport)
        }
    }
}
