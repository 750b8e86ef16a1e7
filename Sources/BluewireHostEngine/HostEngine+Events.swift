import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireL2CAP

extension HostEngine {
    /// Routes one HCI event (Core Vol 4 Part E §7.7).
    mutating func handle(_ event: HCIEvent) {
        switch event {
        case .commandComplete, .commandStatus:
            if let completion = commandFlow.handle(event) { commandCompleted(completion) }
            sendCommands()
        case .numberOfCompletedPackets(let nocp):
            // §7.7.19: the controller freed buffers; more queued fragments may go.
            for entry in nocp {
                aclCredits.completed(handle: entry.connectionHandle, count: Int(entry.numCompletedPackets))
            }
            pumpACL()
            // Streams top their links up again (HostEngine+ATTStreams).
            pumpATTStreams()
        case .disconnectionComplete(let dc):
            guard dc.status.isSuccess else { return }
            linkDisconnected(handle: dc.connectionHandle, reason: dc.reason)
        case .hardwareError(let code):
            hardwareError(code)
        case .leMeta(let meta):
            handle(meta)
        case .encryptionChange(let change):
            // Core Vol 4 Part E §7.7.8: Encryption_Enabled 0x01 is AES-CCM on LE.
            encryptionChanged(handle: change.connectionHandle, status: change.status,
                              enabled: change.encryptionEnabled != 0, keySize: change.encryptionKeySize)
        case .encryptionKeyRefreshComplete(let refresh):
            encryptionChanged(handle: refresh.connectionHandle, status: refresh.status, enabled: true, keySize: nil)
        case .readRemoteVersionInformationComplete, .unknown:
            break
        }
    }

    mutating func handle(_ meta: LEMetaEvent) {
        switch meta {
        case .advertisingReport(let event):
            for report in event { scanReceived(legacy: report) }
        case .extendedAdvertisingReport(let event):
            for report in event { scanReceived(extended: report) }
        case .connectionComplete(let cc), .enhancedConnectionComplete(let cc):
            connectionComplete(cc)
        case .connectionUpdateComplete(let update):
            connectionUpdateCompleted(update)
        case .dataLengthChange(let change):
            guard links.index(forKey: change.connectionHandle) != nil else { return }
            emit(.dataLengthChanged(
                connection: change.connectionHandle, maxTxOctets: change.maxTxOctets, maxTxTime: change.maxTxTime,
                maxRxOctets: change.maxRxOctets, maxRxTime: change.maxRxTime))
        case .advertisingSetTerminated(let terminated):
            emit(.advertisingSetTerminated(
                handle: terminated.advertisingHandle, status: terminated.status,
                connectionHandle: terminated.connectionHandle,
                numCompletedEvents: terminated.numCompletedExtendedAdvertisingEvents))
            advertisingSetTerminated(status: terminated.status)
        case .longTermKeyRequest(let request):
            longTermKeyRequested(request)
        case .phyUpdateComplete(let update):
            guard update.status.isSuccess, links.index(forKey: update.connectionHandle) != nil else { return }
            emit(.phyUpdated(connection: update.connectionHandle, tx: update.txPHY, rx: update.rxPHY))
        case .unknown(let subevent, let parameters):
            #if !BLUEWIRE_NO_SECURITY
            // LE Read Local P-256 Public Key Complete, LE Generate DHKey Complete: the controller's crypto.
            if subevent.rawValue == 0x08 || subevent.rawValue == 0x09 { cryptoEvent(subevent: subevent.rawValue, parameters) }
            #endif
        case .directedAdvertisingReport, .readRemoteFeaturesComplete, .channelSelectionAlgorithm:
            break
        }
    }

    /// Hardware Error (§7.7.16): the controller lost its state. Every command, procedure and link
    /// fails; the application starts again with `.start`.
    mutating func hardwareError(_ code: UInt8) {
        // First, so the links' disconnections below find their peers in Error (not Initial).
        failEveryPeer(cause: .hardwareError(code))
        activeCommand = nil
        _ = commandFlow.cancelAll()
        cancelRawCommands()
        failScan(cause: .hardwareError(code))
        let cancelled = procedures
        procedures.removeAll()
        for procedure in cancelled { fail(procedure, .command(.cancelled(HCIOpcode(rawValue: 0)))) }
        bringUp = nil
        if let pending = pendingConnection {
            pendingConnection = nil
            complete(pending.requestID, .failure(.connectionFailed(.hardwareFailure)))
        }
        for handle in links.sortedKeys { linkDisconnected(handle: handle, reason: .hardwareFailure) }
        advertising = AdvertisingState()
        phase = .failed
        emit(.hardwareError(code))
    }
}
