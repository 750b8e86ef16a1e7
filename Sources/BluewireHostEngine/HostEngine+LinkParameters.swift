import BluewireCore
import BluewireHCI

// The application's link-parameter requests: LE Set Data Length (Core Vol 4 Part E §7.8.33) and LE
// Connection Update (§7.8.18). The engine's own LE Set Data Length after a connection and the updates
// it makes for a peer's Connection Parameter Update Request are `.bestEffort` procedures without a
// request; they stay as they are. The PHY requests are in HostEngine+PHY.
extension HostEngine {
    /// `.setDataLength`: the values checked against §7.8.33's ranges, then LE Set Data Length in the
    /// procedure queue; its Command Complete finishes the request.
    mutating func setDataLength(_ id: HostRequestID, _ connection: UInt16, txOctets: UInt16, txTime: UInt16) {
        if let error = LinkParameterError.checkDataLength(txOctets: txOctets, txTime: txTime) {
            return complete(id, .failure(.linkParameters(error)))
        }
        guard links.index(forKey: connection) != nil else { return complete(id, .failure(.unknownConnection(connection))) }
        let command = LESetDataLength(connectionHandle: connection, txOctets: txOctets, txTime: txTime)
        enqueue(id, .setDataLength(connection), [.leSetDataLength(command)])
    }

    /// `.updateConnection`: the parameters checked against §7.8.18, then LE Connection Update in the
    /// procedure queue. Its Command Status only accepts it (`connectionUpdateAccepted`); LE Connection
    /// Update Complete finishes it.
    mutating func updateConnection(_ id: HostRequestID, _ connection: UInt16, _ parameters: LEConnectionParameters) {
        if let error = LinkParameterError.checkConnectionUpdate(parameters) {
            return complete(id, .failure(.linkParameters(error)))
        }
        guard links.index(forKey: connection) != nil else { return complete(id, .failure(.unknownConnection(connection))) }
        let command = LEConnectionUpdate(connectionHandle: connection, connection: parameters)
        enqueue(id, .updateConnection(connection), [.leConnectionUpdate(command)])
    }

    /// The controller accepted LE Connection Update (Command Status, success): the request waits on
    /// the link for LE Connection Update Complete. Only accepted requests wait there, so an update the
    /// engine made for the peer and completed before ours was sent does not finish ours.
    mutating func connectionUpdateAccepted(_ id: HostRequestID?, handle: UInt16) {
        guard let id else { return }
        guard links.index(forKey: handle) != nil else { return complete(id, .failure(.unknownConnection(handle))) }
        links[handle]?.connectionUpdateRequests.append(id)
    }

    /// LE Connection Update Complete (§7.7.65.3): with success the link's new parameters, reported as
    /// `.connectionUpdated` and returned to the requests waiting on the link; otherwise those fail with
    /// the status (the link keeps its old parameters, and no event is emitted).
    mutating func connectionUpdateCompleted(_ update: LEConnectionUpdateComplete) {
        let handle = update.connectionHandle
        guard let index = links.index(forKey: handle) else { return }
        let waiting = links.values[index].connectionUpdateRequests
        links.values[index].connectionUpdateRequests.removeAll()
        guard update.status.isSuccess else {
            for id in waiting { complete(id, .failure(.command(.failed(.leConnectionUpdate, update.status)))) }
            return
        }
        links.values[index].interval = update.connectionInterval
        emit(.connectionUpdated(handle: handle, interval: update.connectionInterval,
                                latency: update.peripheralLatency, timeout: update.supervisionTimeout))
        let parameters = HostConnectionParameters(
            interval: update.connectionInterval, latency: update.peripheralLatency, supervisionTimeout: update.supervisionTimeout)
        for id in waiting { complete(id, .success(.connectionParameters(parameters))) }
    }

    /// The link went down: its waiting updates fail with the reason, and so do the link-parameter
    /// requests still in the procedure queue. Those not sent yet are dropped (the handle may name a
    /// new link soon); the one in flight keeps its place until the controller answers, without its request.
    mutating func linkParametersDisconnected(_ link: EngineLink, reason: HCIStatus) {
        for id in link.connectionUpdateRequests { complete(id, .failure(.disconnected(reason))) }
        for index in procedures.indices.reversed() {
            switch procedures[index].kind {
            case .setDataLength(link.handle), .updateConnection(link.handle):
                complete(procedures[index].id, .failure(.disconnected(reason)))
                if index == 0 && activeCommand != nil {
                    procedures[index].id = nil
                } else {
                    procedures.remove(at: index)
                }
            default:
                continue
            }
        }
    }
}
