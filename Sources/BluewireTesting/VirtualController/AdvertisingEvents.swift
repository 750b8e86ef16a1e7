import BluewireCore

/// Advertising events on the link: who hears them, scan requests and responses, and connection requests.
extension LinkWorld {
    /// One advertising event of a set: every listening scanner on the link hears it (in controller order),
    /// then the first initiator it suits connects. The next event is scheduled one interval later.
    func runAdvertisingEvent(controller index: Int, handle: UInt8) {
        let advertiser = controllers[index]
        guard let set = advertiser.advertisingSets[handle], set.enabled else { return }
        for receiver in controllers where receiver.index != index {
            deliverToScanner(from: advertiser, handle: handle, to: receiver)
        }
        for receiver in controllers where receiver.index != index {
            if tryConnect(initiator: receiver, advertiser: advertiser, handle: handle) { return }
        }
        guard var after = advertiser.advertisingSets[handle], after.enabled else { return }
        after.eventCount += 1
        advertiser.advertisingSets[handle] = after
        if after.maxEvents > 0 && after.eventCount >= after.maxEvents {
            stopAdvertising(advertiser, handle: handle)
            sendAdvertisingSetTerminated(advertiser, status: Status.limitReached, set: after, connectionHandle: 0)
            return
        }
        schedule(at: now + after.interval, .advertisingEvent(controller: index, handle: handle, generation: after.generation))
    }

    /// Without radio timing a scanner or initiator that starts hears every advertiser at once, instead of
    /// waiting for their next advertising events.
    func sweepAdvertisers(for index: Int) {
        let receiver = controllers[index]
        for advertiser in controllers where advertiser.index != index {
            for handle in advertiser.advertisingSets.keys.sorted() where advertiser.advertisingSets[handle]?.enabled == true {
                deliverToScanner(from: advertiser, handle: handle, to: receiver)
            }
        }
        guard receiver.initiator != nil else { return }
        for advertiser in controllers where advertiser.index != index {
            for handle in advertiser.advertisingSets.keys.sorted() where advertiser.advertisingSets[handle]?.enabled == true {
                if tryConnect(initiator: receiver, advertiser: advertiser, handle: handle) { return }
            }
        }
    }

    /// The scanning side of an advertising event: the advertising report and, when scanning actively a
    /// scannable advertisement, the scan request and the scan response report.
    func deliverToScanner(from advertiser: ControllerState, handle: UInt8, to receiver: ControllerState) {
        guard let scan = receiver.scan, !scan.isPaused, let set = advertiser.advertisingSets[handle], set.enabled,
            let advertiserAddress = advertiser.advertisingAddress(of: set)
        else { return }
        let parameters = receiver.scanParameters
        guard isListening(since: scan.startedAt, interval: parameters.interval, window: parameters.window) else { return }
        // A scanner using the legacy commands only understands legacy PDUs (Core Vol 4 Part E §3.1.1).
        guard scan.isExtended || set.isLegacyPDU else { return }
        guard let scannerAddress = receiver.ownAddress(type: parameters.ownAddressType) else { return }
        if set.isDirected && !Self.sameDevice(set.peerAddress, scannerAddress) { return }
        if parameters.filterPolicy & 0x01 != 0 && !receiver.isInAcceptList(advertiserAddress) { return }

        // ADV_DIRECT_IND has no AdvData field; scannable extended advertising carries its data only in
        // the scan response (Core Vol 6 Part B §2.3.1.2, §2.3.4).
        let hasData = set.isLegacyPDU ? !set.isDirected : !set.isScannable
        let advertisingData = hasData ? set.data : []
        // With address resolution on, a private address the scanner's list resolves is reported as the identity.
        let reported = resolve(advertiserAddress, by: receiver) ?? advertiserAddress
        report(to: receiver, set: set, address: reported, direct: set.isDirected ? scannerAddress : nil,
               isScanResponse: false, data: advertisingData)
        guard parameters.active, set.isScannable else { return }
        // Advertising_Filter_Policy 1 and 3 answer scan requests only from the filter accept list.
        if set.filterPolicy & 0x01 != 0 && !advertiser.isInAcceptList(scannerAddress) { return }
        if set.scanRequestNotification && advertiser.commandFamily == .extended {
            var out: [UInt8] = [handle, scannerAddress.type.isRandom ? 0x01 : 0x00]
            out.appendAddress(scannerAddress)
            advertiser.sendLEMeta(LESubevent.scanRequestReceived, out)
        }
        report(to: receiver, set: set, address: reported, direct: nil, isScanResponse: true,
               data: set.scanResponseData)
    }

    /// Sends one advertising report (legacy or extended, as the receiver scans), unless the duplicate
    /// filter has already let the same one through.
    func report(
        to receiver: ControllerState, set: AdvertisingSet, address: BluetoothAddress, direct: BluetoothAddress?,
        isScanResponse: Bool, data: [UInt8]
    ) {
        guard var scan = receiver.scan else { return }
        if scan.filterDuplicates != 0 {
            let key = DuplicateKey(
                address: address.value, addressType: address.type.isRandom ? 1 : 0, isScanResponse: isScanResponse,
                sid: set.isLegacyPDU ? 0xFF : set.sid, dataID: set.isLegacyPDU ? 0 : set.dataID)
            guard scan.seen.insert(key).inserted else { return }
            receiver.scan = scan
        }
        let rssi = receiver.configuration.rssi
        if scan.isExtended {
            for event in AdvertisingReports.extended(
                set: set, address: address, direct: direct, isScanResponse: isScanResponse, data: data, rssi: rssi)
            {
                receiver.sendLEMeta(LESubevent.extendedAdvertisingReport, event)
            }
        } else {
            receiver.sendLEMeta(
                LESubevent.advertisingReport,
                AdvertisingReports.legacy(set: set, address: address, isScanResponse: isScanResponse, data: data, rssi: rssi))
        }
    }

    /// Same device address, ignoring whether the type was given as an identity or a plain type.
    static func sameDevice(_ a: BluetoothAddress, _ b: BluetoothAddress) -> Bool {
        a.value == b.value && a.type.isRandom == b.type.isRandom
    }

    /// The initiating side of an advertising event: connects `initiator` to the set if it is waiting
    /// for exactly this advertiser and the advertising allows it. Returns whether it connected.
    func tryConnect(initiator receiver: ControllerState, advertiser: ControllerState, handle: UInt8) -> Bool {
        guard let initiator = receiver.initiator, let set = advertiser.advertisingSets[handle], set.enabled,
            set.isConnectable, initiator.isExtended || set.isLegacyPDU,
            let advertiserAddress = advertiser.advertisingAddress(of: set),
            let initiatorAddress = receiver.ownAddress(type: initiator.ownAddressType),
            isListening(since: initiator.startedAt, interval: initiator.scanInterval, window: initiator.scanWindow)
        else { return false }
        let wanted =
            initiator.filterPolicy == 0
            ? initiatorWants(initiator.peerAddress, advertiser: advertiserAddress, by: receiver)
            : receiver.isInAcceptList(advertiserAddress)
        guard wanted else { return false }
        if set.isDirected && !Self.sameDevice(set.peerAddress, initiatorAddress) { return false }
        // Advertising_Filter_Policy 2 and 3 accept connection requests only from the filter accept list.
        if set.filterPolicy & 0x02 != 0 && !advertiser.isInAcceptList(initiatorAddress) { return false }
        establishConnection(
            initiator: receiver, initiatorAddress: initiatorAddress, advertiser: advertiser, handle: handle,
            advertiserAddress: advertiserAddress)
        return true
    }
}
