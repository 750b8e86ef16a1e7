import BluewireCore

/// LE Set Advertising Parameters / Data / Scan Response Data / Enable (Core Vol 4 Part E §7.8.5–7.8.9),
/// which drive advertising set 0 with legacy PDUs.
extension LinkWorld {
    /// Advertising_Type → Advertising_Event_Properties of the equivalent legacy PDU (Core Vol 4 Part E
    /// §7.8.53, table of legacy properties).
    static let legacyProperties: [UInt16] = [0x0013, 0x001D, 0x0012, 0x0010, 0x0015]

    func setAdvertisingParameters(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let intervalMin = try r.readUInt16("Advertising_Interval_Min")
        let intervalMax = try r.readUInt16("Advertising_Interval_Max")
        let type = try r.readUInt8("Advertising_Type")
        let ownAddressType = try r.readUInt8("Own_Address_Type")
        let peerAddressType = try r.readUInt8("Peer_Address_Type")
        let peerAddress = try r.readAddress(type: BluetoothAddress.AddressType(hciValue: peerAddressType), "Peer_Address")
        let channelMap = try r.readUInt8("Advertising_Channel_Map")
        let filterPolicy = try r.readUInt8("Advertising_Filter_Policy")
        try r.expectEnd("LE_Set_Advertising_Parameters")
        let op = Op.leSetAdvertisingParameters
        guard c.advertisingSets[0]?.enabled != true else { return c.commandComplete(op, [Status.commandDisallowed]) }
        let isHighDutyDirected = type == 0x01
        let intervalsValid = intervalMin <= intervalMax && intervalMin >= 0x0020 && intervalMax <= 0x4000
        guard type <= 0x04, isHighDutyDirected || intervalsValid, ownAddressType <= 0x03, peerAddressType <= 0x01,
            channelMap & 0x07 != 0, channelMap <= 0x07, filterPolicy <= 0x03
        else { return c.commandComplete(op, [Status.invalidParameters]) }
        var set = c.advertisingSets[0] ?? AdvertisingSet(handle: 0)
        set.properties = Self.legacyProperties[Int(type)]
        set.intervalMin = UInt32(intervalMin)
        set.ownAddressType = ownAddressType
        set.peerAddress = peerAddress
        set.filterPolicy = filterPolicy
        set.txPower = c.configuration.advertisingTxPower
        c.advertisingSets[0] = set
        c.commandComplete(op, [Status.success])
    }

    /// Both commands carry a length octet and always 31 octets of data (Core Vol 4 Part E §7.8.7).
    func setLegacyAdvertisingData(_ opcode: UInt16, _ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let length = try r.readUInt8("Data_Length")
        let field = try r.readBytes(31, "Data")
        try r.expectEnd("Data")
        guard length <= 31 else { return c.commandComplete(opcode, [Status.invalidParameters]) }
        var set = c.advertisingSets[0] ?? AdvertisingSet(handle: 0)
        let data = Array(field.prefix(Int(length)))
        if opcode == Op.leSetAdvertisingData { set.data = data } else { set.scanResponseData = data }
        c.advertisingSets[0] = set
        c.commandComplete(opcode, [Status.success])
    }

    func setAdvertisingEnable(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let enable = try r.readUInt8("Advertising_Enable")
        try r.expectEnd("Advertising_Enable")
        let op = Op.leSetAdvertisingEnable
        guard enable <= 0x01 else { return c.commandComplete(op, [Status.invalidParameters]) }
        var set = c.advertisingSets[0] ?? AdvertisingSet(handle: 0)
        if enable == 0 {
            if set.enabled {
                set.enabled = false
                set.generation &+= 1
            }
            c.advertisingSets[0] = set
            return c.commandComplete(op, [Status.success])
        }
        // Enabling what is already enabled changes nothing (Core Vol 4 Part E §7.8.9).
        if set.enabled { return c.commandComplete(op, [Status.success]) }
        guard c.advertisingAddress(of: set) != nil else { return c.commandComplete(op, [Status.invalidParameters]) }
        c.advertisingSets[0] = set
        c.commandComplete(op, [Status.success])
        startAdvertising(c, handle: 0, duration: set.isHighDutyCycle ? .microseconds(1_280_000) : nil, maxEvents: 0)
    }

    // MARK: shared by legacy and extended advertising

    /// Enables a set: its first advertising event happens now, the next ones every interval.
    func startAdvertising(_ c: ControllerState, handle: UInt8, duration: TimeSpan?, maxEvents: Int) {
        guard var set = c.advertisingSets[handle] else { return }
        set.enabled = true
        set.generation &+= 1
        set.eventCount = 0
        set.maxEvents = maxEvents
        c.advertisingSets[handle] = set
        if let duration {
            schedule(at: now + duration, .advertisingTimeout(controller: c.index, handle: handle, generation: set.generation))
        }
        runAdvertisingEvent(controller: c.index, handle: handle)
    }

    func stopAdvertising(_ c: ControllerState, handle: UInt8) {
        guard var set = c.advertisingSets[handle], set.enabled else { return }
        set.enabled = false
        set.generation &+= 1
        c.advertisingSets[handle] = set
    }

    /// The advertising duration (or the 1.28 s of high duty cycle directed advertising) ran out.
    func advertisingTimedOut(controller index: Int, handle: UInt8) {
        let c = controllers[index]
        guard let set = c.advertisingSets[handle], set.enabled else { return }
        stopAdvertising(c, handle: handle)
        if c.commandFamily == .extended {
            sendAdvertisingSetTerminated(c, status: Status.advertisingTimeout, set: set, connectionHandle: 0)
        } else if set.isDirected && set.isHighDutyCycle {
            // Legacy high duty cycle directed advertising reports its timeout as a failed connection
            // (Core Vol 4 Part E §7.8.9).
            sendConnectionComplete(
                c, status: Status.advertisingTimeout, handle: 0, role: 1, peer: set.peerAddress,
                interval: 0, latency: 0, timeout: 0, clockAccuracy: 0)
        }
    }

    /// LE Advertising Set Terminated (Core Vol 4 Part E §7.7.65.18).
    func sendAdvertisingSetTerminated(_ c: ControllerState, status: UInt8, set: AdvertisingSet, connectionHandle: UInt16) {
        var out: [UInt8] = [status, set.handle]
        out.appendLE(connectionHandle)
        out.append(UInt8(clamping: set.eventCount))
        c.sendLEMeta(LESubevent.advertisingSetTerminated, out)
    }
}
