import BluewireCore
import BluewireHCI
import BluewireL2CAP

extension BluetoothHost {
    /// Handles one packet from the controller.
    func receive(_ packet: HCIPacket) {
        switch packet.type {
        case .event:
            let event: HCIEvent
            do throws(DecodeError) {
                event = try HCIEvent(decoding: packet.payload)
            } catch {
                log.hci.warning("malformed event dropped: \(error)")
                return
            }
            handle(event)
        case .acl:
            receiveACL(packet.payload)
        default:
            log.hci.debug("ignored \(packet.type) packet")
        }
    }

    func handle(_ event: HCIEvent) {
        log.hci.trace("< \(event.code)")
        switch event {
        case .commandComplete, .commandStatus:
            if let completion = commandFlow.handle(event) { complete(completion) }
            pumpCommands()
        case .numberOfCompletedPackets(let nocp):
            for entry in nocp {
                _ = aclCredits.completed(handle: entry.connectionHandle, count: Int(entry.numCompletedPackets))
            }
            pumpACL()
        case .disconnectionComplete(let dc):
            guard dc.status.isSuccess else { return }
            linkDisconnected(handle: dc.connectionHandle, reason: dc.reason)
        case .hardwareError(let code):
            hardwareError(code: code)
        case .leMeta(let meta):
            handle(meta)
        case .encryptionChange, .encryptionKeyRefreshComplete, .readRemoteVersionInformationComplete, .unknown:
            log.hci.debug("event \(event.code) not used by the host")
        }
    }

    func handle(_ meta: LEMetaEvent) {
        switch meta {
        case .advertisingReport(let event):
            for report in event { scanReceived(legacy: report) }
        case .extendedAdvertisingReport(let event):
            for report in event { scanReceived(extended: report) }
        case .directedAdvertisingReport:
            log.hci.debug("directed advertising report")
        case .connectionComplete(let cc), .enhancedConnectionComplete(let cc):
            connectionComplete(cc)
        case .connectionUpdateComplete(let update):
            if update.status.isSuccess, let link = links[update.connectionHandle] {
                link.connectionInterval = update.connectionInterval
                publish(.connectionUpdated(handle: update.connectionHandle, interval: update.connectionInterval,
                                           latency: update.peripheralLatency, timeout: update.supervisionTimeout))
            }
        case .dataLengthChange(let change):
            publish(.dataLengthChanged(handle: change.connectionHandle, maxTxOctets: change.maxTxOctets, maxRxOctets: change.maxRxOctets))
        case .phyUpdateComplete(let update):
            if update.status.isSuccess {
                publish(.phyUpdated(handle: update.connectionHandle, tx: update.txPHY, rx: update.rxPHY))
            }
        case .advertisingSetTerminated(let terminated):
            publish(.advertisingSetTerminated(handle: terminated.advertisingHandle, status: terminated.status,
                                              connectionHandle: terminated.connectionHandle))
        case .readRemoteFeaturesComplete, .longTermKeyRequest, .channelSelectionAlgorithm, .unknown:
            log.hci.debug("LE subevent \(meta.subeventCode) not used by the host")
        }
    }

    /// A Hardware Error (Core Vol 4 Part E §7.7.16): every link is gone; fail what waits (the state
    /// machines of the scan, the pending connection and every link go to Error with the cause) and
    /// reset the controller so it can be used again.
    func hardwareError(code: UInt8) {
        log.hci.error("hardware error 0x\(hex(code, width: 2)); resetting the controller")
        commandCancellationCause = .hardwareError(code: code)
        for completion in commandFlow.cancelAll() { complete(completion) }
        // Every connection state machine with something under way goes to Error with the cause (the
        // scan, a pending connection, each link): the application resets each before using it again.
        endScan(error: .hardwareError(code: code), trigger: .failure)
        failPendingConnection(.hardwareError(code: code))
        failLinks(cause: .host(.hardwareError(code: code)), reason: .hardwareFailure)
        enqueueProcedure { host in await host.recoverFromHardwareError(code: code) }
    }

    /// Brings the controller up again after a hardware error, with the same address, then reports
    /// the error. Until then the Host is starting again: a scan or connection begun meanwhile would
    /// be wiped by the Reset or sent before the event masks are set, so they are refused. The Reset
    /// also wiped the advertising set: it is set up again if the application still wants it.
    func recoverFromHardwareError(code: UInt8) async {
        guard phase == .running, let address = controller?.randomAddress else { return }
        phase = .starting
        let result = await runBringUp(address: address)
        guard phase == .starting else { return }
        switch result {
        case .success:
            phase = .running
            if let advertisement = peripheral.advertising.advertisement {
                peripheral.advertising.isEnabled = false
                do throws(PeripheralError) {
                    try await startAdvertising(advertisement)
                } catch {
                    log.hci.error("advertising not restarted after a hardware error: \(error)")
                }
            }
            publish(.hardwareError(code: code))
        case .failure(let error):
            log.hci.error("controller did not come back after a hardware error: \(error)")
            transportFailed(.closed)
        }
    }
}
