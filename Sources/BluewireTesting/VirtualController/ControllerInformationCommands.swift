import BluewireCore

/// Reset, event masks, the informational commands and the filter accept list.
extension LinkWorld {
    /// HCI_Reset (Core Vol 4 Part E §7.3.2): the link layer forgets everything. Connections vanish on this
    /// side without an event; the peer notices only when its supervision timeout expires.
    func reset(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        try r.expectEnd("Reset")
        for id in c.connections.values.sorted() {
            guard let connection = connections[id], let side = connection.side(of: c.index) else { continue }
            connection.ends[side].isDetached = true
            loseLink(connection)
        }
        c.reset()
        c.commandComplete(Op.reset, [Status.success])
    }

    func setEventMask(_ opcode: UInt16, _ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let mask = try r.readUInt64("Event_Mask")
        try r.expectEnd("Event_Mask")
        if opcode == Op.setEventMask { c.eventMask = mask } else { c.leEventMask = mask }
        c.commandComplete(opcode, [Status.success])
    }

    func readInformation(_ opcode: UInt16, _ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        try r.expectEnd("parameters")
        let config = c.configuration
        var out: [UInt8] = [Status.success]
        switch opcode {
        case Op.readLocalVersionInformation:
            out.append(config.hciVersion)
            out.appendLE(config.hciSubversion)
            out.append(config.hciVersion)
            out.appendLE(config.companyIdentifier)
            out.appendLE(config.lmpSubversion)
        case Op.readLocalSupportedCommands:
            out.append(contentsOf: SupportedCommands.bitmap(for: supportedOpcodes[c.index]))
        case Op.readLocalSupportedFeatures:
            // LMP features page 0: only "BR/EDR Not Supported" (bit 37) and "LE Supported (Controller)" (bit 38).
            out.append(contentsOf: [0, 0, 0, 0, 0x60, 0, 0, 0])
        case Op.readBufferSize:
            out.appendLE(config.aclBufferSize.packetLength)
            out.append(0)
            out.appendLE(config.aclBufferSize.packetCount)
            out.appendLE(0)
        case Op.readBDADDR:
            out.appendAddress(config.publicAddress)
        case Op.leReadBufferSize, Op.leReadBufferSizeV2:
            let buffer = config.leBufferSize ?? VirtualController.BufferSize(packetLength: 0, packetCount: 0)
            out.appendLE(buffer.packetLength)
            out.append(UInt8(clamping: buffer.packetCount))
            if opcode == Op.leReadBufferSizeV2 {
                // No ISO support: ISO_Data_Packet_Length and Total_Num_ISO_Data_Packets are zero.
                out.appendLE(0)
                out.append(0)
            }
        case Op.leReadLocalSupportedFeatures:
            for shift in stride(from: UInt64(0), to: 64, by: 8) {
                out.append(UInt8(truncatingIfNeeded: config.leFeatures.rawValue >> shift))
            }
        case Op.leReadSupportedStates:
            out.append(contentsOf: [0xFF, 0xFF, 0x3F, 0xFF, 0xFF, 0x03, 0x00, 0x00])
        case Op.leRand:
            let value = c.nextRandom()
            for shift in stride(from: UInt64(0), to: 64, by: 8) { out.append(UInt8(truncatingIfNeeded: value >> shift)) }
        case Op.leReadAdvertisingPhysicalChannelTxPower:
            out.append(UInt8(bitPattern: config.advertisingTxPower))
        case Op.leReadFilterAcceptListSize:
            out.append(config.filterAcceptListSize)
        case Op.leReadMaximumDataLength:
            let octets = config.supportedMaxOctets
            for _ in 0..<2 {
                out.appendLE(octets)
                out.appendLE(Self.maxTime(octets: octets))
            }
        case Op.leReadSuggestedDefaultDataLength:
            out.appendLE(c.suggestedMaxTxOctets)
            out.appendLE(Self.maxTime(octets: c.suggestedMaxTxOctets))
        case Op.leReadMaximumAdvertisingDataLength:
            out.appendLE(config.maximumAdvertisingDataLength)
        case Op.leReadNumberOfSupportedAdvertisingSets:
            out.append(config.numberOfAdvertisingSets)
        default:
            out = [Status.unknownCommand]
        }
        c.commandComplete(opcode, out)
    }

    /// The transmit time of a PDU of `octets` payload on LE 1M, as the data length commands express it
    /// (27 → 328 µs, 251 → 2120 µs; Core Vol 6 Part B §4.5.10).
    static func maxTime(octets: UInt16) -> UInt16 { UInt16(clamping: (Int(octets) + 14) * 8) }

    /// LE Set Random Address (Core Vol 4 Part E §7.8.4): refused while legacy advertising, scanning or
    /// initiating could be using the address.
    func setRandomAddress(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let address = try r.readAddress(type: .random, "Random_Address")
        try r.expectEnd("Random_Address")
        let legacyAdvertising = c.commandFamily == .legacy && c.advertisingSets[0]?.enabled == true
        guard !legacyAdvertising, c.scan == nil, c.initiator == nil else {
            return c.commandComplete(Op.leSetRandomAddress, [Status.commandDisallowed])
        }
        c.randomAddress = address
        c.commandComplete(Op.leSetRandomAddress, [Status.success])
    }

    /// Whether advertising, scanning or initiating is using the filter accept list, which then must not change.
    func isAcceptListInUse(_ c: ControllerState) -> Bool {
        let advertising = c.advertisingSets.values.contains { $0.enabled && $0.filterPolicy != 0 }
        let scanning = c.scan != nil && c.scanParameters.filterPolicy & 0x01 != 0
        let initiating = c.initiator?.filterPolicy == 1
        return advertising || scanning || initiating
    }

    func editFilterAcceptList(_ opcode: UInt16, _ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        var entry: BluetoothAddress?
        if opcode != Op.leClearFilterAcceptList {
            let type = try r.readUInt8("Address_Type")
            guard type <= 0x01 || type == 0xFF else { throw r.error(.invalidValue(UInt64(type)), "Address_Type") }
            entry = try r.readAddress(type: BluetoothAddress.AddressType(hciValue: type), "Address")
        }
        try r.expectEnd("parameters")
        guard !isAcceptListInUse(c) else { return c.commandComplete(opcode, [Status.commandDisallowed]) }
        switch opcode {
        case Op.leClearFilterAcceptList:
            c.acceptList = []
        case Op.leAddDeviceToFilterAcceptList:
            guard let entry else { break }
            if !c.acceptList.contains(entry) {
                guard c.acceptList.count < Int(c.configuration.filterAcceptListSize) else {
                    return c.commandComplete(opcode, [Status.memoryCapacityExceeded])
                }
                c.acceptList.append(entry)
            }
        default:
            c.acceptList.removeAll { $0 == entry }
        }
        c.commandComplete(opcode, [Status.success])
    }

    /// Read RSSI (Core Vol 4 Part E §7.5.4): the configured RSSI for a connected handle.
    func readRSSI(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let handle = try r.readUInt16("Handle")
        try r.expectEnd("Handle")
        var out: [UInt8] = [connection(handle, of: c) == nil ? Status.unknownConnectionIdentifier : Status.success]
        out.appendLE(handle)
        out.append(UInt8(bitPattern: c.configuration.rssi))
        c.commandComplete(Op.readRSSI, out)
    }
}
