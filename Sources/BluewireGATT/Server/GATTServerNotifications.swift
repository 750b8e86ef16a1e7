import BluewireATT
import BluewireCore

extension GATTServer {
    /// Handle Value Notifications (Core Vol 3 Part F §3.4.7.1) of `value` for every connection whose
    /// CCCD for this characteristic has bit 0 set (Part G §4.10). Each value is cut to ATT_MTU − 3 of
    /// that connection. Returns the PDUs to send; notifications need no confirmation.
    public mutating func notify(handle valueHandle: UInt16, value: [UInt8]) throws(GATTServerError) -> [GATTOutboundPDU] {
        try notify(handle: valueHandle, value: value, connections: connections.sortedKeys)
    }

    /// A notification for one connection: empty unless it is subscribed to notifications.
    public mutating func notify(
        handle valueHandle: UInt16, value: [UInt8], to connection: UInt16
    ) throws(GATTServerError) -> [GATTOutboundPDU] {
        try notify(handle: valueHandle, value: value, connections: [connection])
    }

    mutating func notify(
        handle valueHandle: UInt16, value: [UInt8], connections targets: [UInt16]
    ) throws(GATTServerError) -> [GATTOutboundPDU] {
        let descriptor = try configurationHandle(of: valueHandle, needing: .notify)
        var out: [GATTOutboundPDU] = []
        for connection in targets {
            guard let state = connections[connection],
                  (state.clientConfigurations[descriptor] ?? 0) & 0x0001 != 0 else { continue }
            let part = value.prefix(state.mtu - 3)
            out.append(GATTOutboundPDU(
                connection: connection, bytes: ATTPDU.handleValueNotification(handle: valueHandle, value: part).encode()))
        }
        return out
    }

    /// Handle Value Indications (§3.4.7.2) for every connection whose CCCD has bit 1 set (Part G §4.11).
    /// A connection may have only one indication awaiting confirmation: for a connection that is
    /// free the PDU is returned now; otherwise the value waits in a bounded queue and is returned by
    /// `handle`/`confirm` when the confirmation arrives. A full queue drops the value and reports
    /// `indicationDropped`.
    public mutating func indicate(handle valueHandle: UInt16, value: [UInt8]) throws(GATTServerError) -> [GATTOutboundPDU] {
        try indicate(handle: valueHandle, value: value, connections: connections.sortedKeys)
    }

    /// An indication for one connection: empty unless it is subscribed and free (else it is queued).
    public mutating func indicate(
        handle valueHandle: UInt16, value: [UInt8], to connection: UInt16
    ) throws(GATTServerError) -> [GATTOutboundPDU] {
        try indicate(handle: valueHandle, value: value, connections: [connection])
    }

    mutating func indicate(
        handle valueHandle: UInt16, value: [UInt8], connections targets: [UInt16]
    ) throws(GATTServerError) -> [GATTOutboundPDU] {
        let descriptor = try configurationHandle(of: valueHandle, needing: .indicate)
        // No connection can be sent more than a maximum-length value, so store no more than that.
        let kept = Array(value.prefix(maximumAttributeValueLength))
        var out: [GATTOutboundPDU] = []
        for connection in targets {
            guard let state = connections[connection],
                  (state.clientConfigurations[descriptor] ?? 0) & 0x0002 != 0 else { continue }
            if state.indicationInFlight == nil {
                connections[connection]?.indicationInFlight = valueHandle
                out.append(indicationPDU(valueHandle, kept, connection: connection, mtu: state.mtu))
            } else if state.pendingIndications.count < configuration.maximumQueuedIndications {
                connections[connection]?.pendingIndications.append(PendingIndication(handle: valueHandle, value: kept))
            } else {
                emit(.indicationDropped(connection: connection, handle: valueHandle))
            }
        }
        return out
    }

    /// Records a Handle Value Confirmation (§3.4.7.3) from `connection` and returns the next queued
    /// indication for it, if any. `handle(_:from:)` calls this for a confirmation PDU; call it directly
    /// when the bearer consumes confirmations itself. A confirmation with nothing outstanding is ignored.
    public mutating func confirm(connection: UInt16) -> GATTOutboundPDU? {
        guard let state = connections[connection], let confirmed = state.indicationInFlight else { return nil }
        emit(.indicationConfirmed(connection: connection, handle: confirmed))
        connections[connection]?.indicationInFlight = nil
        while let next = connections[connection]?.pendingIndications.first {
            connections[connection]?.pendingIndications.removeFirst()
            // A client that unsubscribed meanwhile no longer gets what was queued for it.
            guard subscription(connection: connection, valueHandle: next.handle).indications else { continue }
            connections[connection]?.indicationInFlight = next.handle
            return indicationPDU(next.handle, next.value, connection: connection, mtu: state.mtu)
        }
        return nil
    }

    /// Whether an indication awaits confirmation on `connection`.
    public func indicationOutstanding(on connection: UInt16) -> Bool {
        connections[connection]?.indicationInFlight != nil
    }

    func indicationPDU(_ handle: UInt16, _ value: [UInt8], connection: UInt16, mtu: Int) -> GATTOutboundPDU {
        GATTOutboundPDU(
            connection: connection,
            bytes: ATTPDU.handleValueIndication(handle: handle, value: value.prefix(mtu - 3)).encode())
    }

    /// The CCCD handle of the characteristic whose value is at `valueHandle`, if it has `property`.
    func configurationHandle(
        of valueHandle: UInt16, needing property: CharacteristicProperties
    ) throws(GATTServerError) -> UInt16 {
        guard let characteristic = database.characteristic(valueHandle: valueHandle) else {
            throw .notCharacteristicValue(valueHandle)
        }
        guard characteristic.properties.contains(property), let descriptor = characteristic.clientConfigurationHandle else {
            throw .notSupportedByCharacteristic(valueHandle)
        }
        return descriptor
    }
}
