import BluewireCore

/// LE Set (Extended) Scan Parameters and Enable (Core Vol 4 Part E §7.8.10, 7.8.11, 7.8.64, 7.8.65).
extension LinkWorld {
    func setScanParameters(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let type = try r.readUInt8("LE_Scan_Type")
        let interval = try r.readUInt16("LE_Scan_Interval")
        let window = try r.readUInt16("LE_Scan_Window")
        let ownAddressType = try r.readUInt8("Own_Address_Type")
        let filterPolicy = try r.readUInt8("Scanning_Filter_Policy")
        try r.expectEnd("LE_Set_Scan_Parameters")
        let op = Op.leSetScanParameters
        guard c.scan == nil else { return c.commandComplete(op, [Status.commandDisallowed]) }
        guard type <= 0x01, (0x0004...0x4000).contains(interval), (0x0004...interval).contains(window),
            ownAddressType <= 0x03, filterPolicy <= 0x03
        else { return c.commandComplete(op, [Status.invalidParameters]) }
        c.scanParameters = ScanParameters(
            active: type == 1, interval: UInt32(interval), window: UInt32(window),
            ownAddressType: ownAddressType, filterPolicy: filterPolicy)
        c.commandComplete(op, [Status.success])
    }

    func setScanEnable(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let enable = try r.readUInt8("LE_Scan_Enable")
        let filterDuplicates = try r.readUInt8("Filter_Duplicates")
        try r.expectEnd("LE_Set_Scan_Enable")
        let op = Op.leSetScanEnable
        guard enable <= 0x01, filterDuplicates <= 0x01 else { return c.commandComplete(op, [Status.invalidParameters]) }
        guard enable == 1 else {
            stopScanning(c)
            return c.commandComplete(op, [Status.success])
        }
        if c.scan != nil {
            // Already scanning: only the duplicate filter setting changes (Core Vol 4 Part E §7.8.11).
            c.scan?.filterDuplicates = filterDuplicates
            return c.commandComplete(op, [Status.success])
        }
        guard c.ownAddress(type: c.scanParameters.ownAddressType) != nil else {
            return c.commandComplete(op, [Status.invalidParameters])
        }
        c.commandComplete(op, [Status.success])
        startScanning(c, isExtended: false, filterDuplicates: filterDuplicates, duration: nil, period: nil)
    }

    func setExtendedScanParameters(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let ownAddressType = try r.readUInt8("Own_Address_Type")
        let filterPolicy = try r.readUInt8("Scanning_Filter_Policy")
        let phys = try r.readUInt8("Scanning_PHYs")
        var blocks: [(type: UInt8, interval: UInt16, window: UInt16)] = []
        for bit in [0, 2] as [UInt8] where phys & (1 << bit) != 0 {
            let type = try r.readUInt8("Scan_Type")
            let interval = try r.readUInt16("Scan_Interval")
            let window = try r.readUInt16("Scan_Window")
            blocks.append((type, interval, window))
        }
        try r.expectEnd("LE_Set_Extended_Scan_Parameters")
        let op = Op.leSetExtendedScanParameters
        guard c.scan == nil else { return c.commandComplete(op, [Status.commandDisallowed]) }
        guard ownAddressType <= 0x03, filterPolicy <= 0x03, phys & ~0x05 == 0, let first = blocks.first,
            blocks.allSatisfy({ $0.type <= 0x01 && $0.interval >= 0x0004 && (0x0004...$0.interval).contains($0.window) })
        else { return c.commandComplete(op, [Status.invalidParameters]) }
        guard phys & 0x04 == 0 || c.supportedPHYMask & 0x04 != 0 else {
            return c.commandComplete(op, [Status.unsupportedFeature])
        }
        c.scanParameters = ScanParameters(
            active: first.type == 1, interval: UInt32(first.interval), window: UInt32(first.window),
            ownAddressType: ownAddressType, filterPolicy: filterPolicy)
        c.commandComplete(op, [Status.success])
    }

    func setExtendedScanEnable(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let enable = try r.readUInt8("Enable")
        let filterDuplicates = try r.readUInt8("Filter_Duplicates")
        let duration = try r.readUInt16("Duration")
        let period = try r.readUInt16("Period")
        try r.expectEnd("LE_Set_Extended_Scan_Enable")
        let op = Op.leSetExtendedScanEnable
        guard enable <= 0x01, filterDuplicates <= 0x02 else { return c.commandComplete(op, [Status.invalidParameters]) }
        guard enable == 1 else {
            stopScanning(c)
            return c.commandComplete(op, [Status.success])
        }
        let durationSpan = Int64(duration) * Units.tenMilliseconds
        let periodSpan = Int64(period) * Units.scanPeriod
        // Core Vol 4 Part E §7.8.65: a period needs a duration shorter than it; resetting duplicates
        // each period needs a period.
        if period != 0 && (duration == 0 || durationSpan >= periodSpan) || filterDuplicates == 0x02 && period == 0 {
            return c.commandComplete(op, [Status.invalidParameters])
        }
        guard c.ownAddress(type: c.scanParameters.ownAddressType) != nil else {
            return c.commandComplete(op, [Status.invalidParameters])
        }
        let kept = filterDuplicates == 0x01 ? c.scan?.seen : nil
        c.commandComplete(op, [Status.success])
        startScanning(
            c, isExtended: true, filterDuplicates: filterDuplicates,
            duration: duration == 0 ? nil : .microseconds(durationSpan),
            period: period == 0 ? nil : .microseconds(periodSpan))
        if let kept { c.scan?.seen = kept }
    }

    // MARK: scanning state

    func startScanning(_ c: ControllerState, isExtended: Bool, filterDuplicates: UInt8, duration: TimeSpan?, period: TimeSpan?) {
        c.scanGeneration &+= 1
        c.scan = ScanState(
            isExtended: isExtended, filterDuplicates: filterDuplicates, startedAt: now,
            generation: c.scanGeneration, duration: duration, period: period)
        if let duration {
            schedule(at: now + duration, .scanDurationEnded(controller: c.index, generation: c.scanGeneration))
        }
        if let period {
            schedule(at: now + period, .scanPeriodStarted(controller: c.index, generation: c.scanGeneration))
        }
        if !timing.modelsRadio { sweepAdvertisers(for: c.index) }
    }

    func stopScanning(_ c: ControllerState) {
        c.scan = nil
        c.scanGeneration &+= 1
    }

    /// End of an extended scan's Duration: with no Period scanning stops and the host hears LE Scan Timeout;
    /// with a Period it pauses until the next period begins.
    func scanDurationEnded(controller index: Int) {
        let c = controllers[index]
        guard var scan = c.scan else { return }
        if scan.period == nil {
            stopScanning(c)
            c.sendLEMeta(LESubevent.scanTimeout, [])
        } else {
            scan.isPaused = true
            c.scan = scan
        }
    }

    func scanPeriodStarted(controller index: Int) {
        let c = controllers[index]
        guard var scan = c.scan, let period = scan.period, let duration = scan.duration else { return }
        scan.isPaused = false
        scan.startedAt = now
        if scan.filterDuplicates == 0x02 { scan.seen = [] }
        c.scan = scan
        schedule(at: now + duration, .scanDurationEnded(controller: index, generation: scan.generation))
        schedule(at: now + period, .scanPeriodStarted(controller: index, generation: scan.generation))
        if !timing.modelsRadio { sweepAdvertisers(for: index) }
    }

    /// Whether a receiver scanning with this interval and window since `start` is listening at `now`.
    /// Without radio timing it always is.
    func isListening(since start: MonotonicInstant, interval: UInt32, window: UInt32) -> Bool {
        guard timing.modelsRadio else { return true }
        let intervalMicros = Int64(max(interval, 1)) * Units.advertisingSlot
        let elapsed = (now - start).microseconds
        return elapsed % intervalMicros < Int64(window) * Units.advertisingSlot
    }
}
