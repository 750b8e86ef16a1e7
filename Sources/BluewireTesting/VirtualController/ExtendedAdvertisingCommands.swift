import BluewireCore

/// The extended advertising commands (Core Vol 4 Part E §7.8.52–7.8.60): advertising sets, fragmented
/// data, enable with duration and event limits.
extension LinkWorld {
    func setAdvertisingSetRandomAddress(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let handle = try r.readUInt8("Advertising_Handle")
        let address = try r.readAddress(type: .random, "Random_Address")
        try r.expectEnd("Random_Address")
        let op = Op.leSetAdvertisingSetRandomAddress
        guard var set = c.advertisingSets[handle] else { return c.commandComplete(op, [Status.unknownAdvertisingIdentifier]) }
        guard !set.enabled else { return c.commandComplete(op, [Status.commandDisallowed]) }
        set.randomAddress = address
        c.advertisingSets[handle] = set
        c.commandComplete(op, [Status.success])
    }

    func setExtendedAdvertisingParameters(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let handle = try r.readUInt8("Advertising_Handle")
        let properties = try r.readUInt16("Advertising_Event_Properties")
        let intervalMin = try r.readUInt24("Primary_Advertising_Interval_Min")
        let intervalMax = try r.readUInt24("Primary_Advertising_Interval_Max")
        let channelMap = try r.readUInt8("Primary_Advertising_Channel_Map")
        let ownAddressType = try r.readUInt8("Own_Address_Type")
        let peerAddressType = try r.readUInt8("Peer_Address_Type")
        let peerAddress = try r.readAddress(type: BluetoothAddress.AddressType(hciValue: peerAddressType), "Peer_Address")
        let filterPolicy = try r.readUInt8("Advertising_Filter_Policy")
        let txPower = try r.readInt8("Advertising_TX_Power")
        let primaryPHY = try r.readUInt8("Primary_Advertising_PHY")
        _ = try r.readUInt8("Secondary_Advertising_Max_Skip")
        let secondaryPHY = try r.readUInt8("Secondary_Advertising_PHY")
        let sid = try r.readUInt8("Advertising_SID")
        let notify = try r.readUInt8("Scan_Request_Notification_Enable")
        try r.expectEnd("LE_Set_Extended_Advertising_Parameters")
        let op = Op.leSetExtendedAdvertisingParameters
        func fail(_ status: UInt8) { c.commandComplete(op, [status, 0]) }

        let existing = c.advertisingSets[handle]
        guard handle <= 0xEF else { return fail(Status.invalidParameters) }
        guard existing != nil || c.advertisingSets.count < Int(c.configuration.numberOfAdvertisingSets) else {
            return fail(Status.memoryCapacityExceeded)
        }
        guard existing?.enabled != true else { return fail(Status.commandDisallowed) }
        var set = existing ?? AdvertisingSet(handle: handle)
        set.properties = properties
        let highDutyDirected = set.isHighDutyCycle && set.isDirected
        let propertiesValid =
            set.isLegacyPDU
            ? Self.legacyProperties.contains(properties & 0x7F)
            : !(set.isConnectable && set.isScannable) && !(set.isAnonymous && set.isConnectable)
        guard propertiesValid, highDutyDirected || (intervalMin <= intervalMax && intervalMin >= 0x20),
            channelMap & 0x07 != 0, channelMap <= 0x07, ownAddressType <= 0x03, peerAddressType <= 0x01,
            filterPolicy <= 0x03, sid <= 0x0F, notify <= 0x01,
            primaryPHY == PHY.le1M || primaryPHY == PHY.leCoded,
            (PHY.le1M...PHY.leCoded).contains(secondaryPHY)
        else { return fail(Status.invalidParameters) }
        let phyMask = c.supportedPHYMask
        guard phyMask & (1 << (primaryPHY - 1)) != 0, phyMask & (1 << (secondaryPHY - 1)) != 0 else {
            return fail(Status.unsupportedFeature)
        }
        if set.isLegacyPDU {
            guard set.data.count <= 31, set.scanResponseData.count <= 31 else { return fail(Status.invalidParameters) }
        } else if set.isScannable && !set.data.isEmpty {
            return fail(Status.invalidParameters)
        }
        set.intervalMin = intervalMin
        set.ownAddressType = ownAddressType
        set.peerAddress = peerAddress
        set.filterPolicy = filterPolicy
        // 0x7F means "no preference"; otherwise the controller picks the closest power it can (−127…20 dBm).
        set.txPower = txPower == 0x7F ? c.configuration.advertisingTxPower : min(txPower, 20)
        set.primaryPHY = primaryPHY
        set.secondaryPHY = set.isLegacyPDU ? PHY.le1M : secondaryPHY
        set.sid = sid
        set.scanRequestNotification = notify == 1
        c.advertisingSets[handle] = set
        c.commandComplete(op, [Status.success, UInt8(bitPattern: set.txPower)])
    }

    /// LE Set Extended Advertising Data and Scan Response Data: Operation 0 intermediate, 1 first,
    /// 2 last, 3 complete, 4 unchanged data (new DID only).
    func setExtendedAdvertisingData(_ opcode: UInt16, _ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let handle = try r.readUInt8("Advertising_Handle")
        let operation = try r.readUInt8("Operation")
        _ = try r.readUInt8("Fragment_Preference")
        let length = try r.readUInt8("Data_Length")
        let fragment = try r.readBytes(Int(length), "Data")
        try r.expectEnd("Data")
        let isScanResponse = opcode == Op.leSetExtendedScanResponseData
        func done(_ status: UInt8) { c.commandComplete(opcode, [status]) }

        guard var set = c.advertisingSets[handle] else { return done(Status.unknownAdvertisingIdentifier) }
        guard operation <= 0x04 else { return done(Status.invalidParameters) }
        if set.isLegacyPDU {
            guard operation == 0x03, length <= 31 else { return done(Status.invalidParameters) }
        }
        if !set.isLegacyPDU && length > 0 {
            // Scannable extended sets carry data only in the scan response, the others never have one.
            guard isScanResponse == set.isScannable else { return done(Status.invalidParameters) }
        }
        if set.enabled && operation <= 0x02 { return done(Status.commandDisallowed) }
        var assembled = (isScanResponse ? set.partialScanResponseData : set.partialData) ?? []
        var finished: [UInt8]?
        switch operation {
        case 0x00, 0x02:
            guard isScanResponse ? set.partialScanResponseData != nil : set.partialData != nil else {
                return done(Status.commandDisallowed)
            }
            assembled.append(contentsOf: fragment)
            if operation == 0x02 { finished = assembled }
        case 0x01:
            assembled = Array(fragment)
        case 0x03:
            finished = Array(fragment)
        default:
            guard set.enabled, length == 0, !set.isLegacyPDU else { return done(Status.invalidParameters) }
            set.dataID &+= 1
            c.advertisingSets[handle] = set
            return done(Status.success)
        }
        guard assembled.count <= Int(c.configuration.maximumAdvertisingDataLength),
            (finished?.count ?? 0) <= Int(c.configuration.maximumAdvertisingDataLength)
        else {
            if isScanResponse { set.partialScanResponseData = nil } else { set.partialData = nil }
            c.advertisingSets[handle] = set
            return done(Status.memoryCapacityExceeded)
        }
        if let finished {
            if isScanResponse { set.scanResponseData = finished } else { set.data = finished }
            if isScanResponse { set.partialScanResponseData = nil } else { set.partialData = nil }
            set.dataID &+= 1
        } else if isScanResponse {
            set.partialScanResponseData = assembled
        } else {
            set.partialData = assembled
        }
        c.advertisingSets[handle] = set
        done(Status.success)
    }

    func setExtendedAdvertisingEnable(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let enable = try r.readUInt8("Enable")
        let count = try r.readUInt8("Num_Sets")
        var entries: [(handle: UInt8, duration: UInt16, maxEvents: UInt8)] = []
        for _ in 0..<count {
            let handle = try r.readUInt8("Advertising_Handle")
            let duration = try r.readUInt16("Duration")
            let maxEvents = try r.readUInt8("Max_Extended_Advertising_Events")
            entries.append((handle, duration, maxEvents))
        }
        try r.expectEnd("LE_Set_Extended_Advertising_Enable")
        let op = Op.leSetExtendedAdvertisingEnable
        func done(_ status: UInt8) { c.commandComplete(op, [status]) }

        guard enable <= 0x01, !(enable == 1 && count == 0), Int(count) <= Int(c.configuration.numberOfAdvertisingSets),
            Set(entries.map(\.handle)).count == entries.count
        else { return done(Status.invalidParameters) }
        if enable == 0 {
            guard entries.allSatisfy({ c.advertisingSets[$0.handle] != nil }) else {
                return done(Status.unknownAdvertisingIdentifier)
            }
            let handles = count == 0 ? c.advertisingSets.keys.sorted() : entries.map(\.handle)
            for handle in handles { stopAdvertising(c, handle: handle) }
            return done(Status.success)
        }
        // Check every set before enabling any: the command succeeds or fails as a whole.
        for entry in entries {
            guard let set = c.advertisingSets[entry.handle] else { return done(Status.unknownAdvertisingIdentifier) }
            guard c.advertisingAddress(of: set) != nil else { return done(Status.invalidParameters) }
            if set.isScannable && !set.isLegacyPDU && set.scanResponseData.isEmpty {
                return done(Status.commandDisallowed)
            }
            if set.isDirected && set.isHighDutyCycle && (entry.duration == 0 || entry.duration > 128) {
                return done(Status.invalidParameters)
            }
        }
        done(Status.success)
        for entry in entries {
            let duration: TimeSpan? = entry.duration == 0 ? nil : .microseconds(Int64(entry.duration) * Units.tenMilliseconds)
            startAdvertising(c, handle: entry.handle, duration: duration, maxEvents: Int(entry.maxEvents))
        }
    }

    func removeAdvertisingSets(_ opcode: UInt16, _ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        if opcode == Op.leRemoveAdvertisingSet {
            let handle = try r.readUInt8("Advertising_Handle")
            try r.expectEnd("Advertising_Handle")
            guard let set = c.advertisingSets[handle] else {
                return c.commandComplete(opcode, [Status.unknownAdvertisingIdentifier])
            }
            guard !set.enabled else { return c.commandComplete(opcode, [Status.commandDisallowed]) }
            c.advertisingSets[handle] = nil
        } else {
            try r.expectEnd("LE_Clear_Advertising_Sets")
            guard !c.advertisingSets.values.contains(where: \.enabled) else {
                return c.commandComplete(opcode, [Status.commandDisallowed])
            }
            c.advertisingSets = [:]
        }
        c.commandComplete(opcode, [Status.success])
    }
}
