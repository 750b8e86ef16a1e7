import BluewireCore

/// LE Create Connection, LE Extended Create Connection, LE Create Connection Cancel and Disconnect
/// (Core Vol 4 Part E §7.8.12, 7.8.66, 7.8.13, 7.1.6).
extension LinkWorld {
    /// Connection parameters as both create commands carry them.
    struct ConnectionParameters {
        var intervalMin: UInt16
        var intervalMax: UInt16
        var latency: UInt16
        var timeout: UInt16

        init(from r: inout ByteReader) throws(DecodeError) {
            intervalMin = try r.readUInt16("Connection_Interval_Min")
            intervalMax = try r.readUInt16("Connection_Interval_Max")
            latency = try r.readUInt16("Max_Latency")
            timeout = try r.readUInt16("Supervision_Timeout")
            _ = try r.readUInt16("Min_CE_Length")
            _ = try r.readUInt16("Max_CE_Length")
        }

        init(intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16) {
            self.intervalMin = intervalMin
            self.intervalMax = intervalMax
            self.latency = latency
            self.timeout = timeout
        }

        /// Core Vol 4 Part E §7.8.12 ranges, and a supervision timeout longer than
        /// (1 + latency) × interval × 2 so that the link survives the allowed skipped events.
        var isValid: Bool {
            (0x0006...0x0C80).contains(intervalMin) && (intervalMin...0x0C80).contains(intervalMax)
                && latency <= 0x01F3 && (0x000A...0x0C80).contains(timeout)
                && Int(timeout) * 4 > (1 + Int(latency)) * Int(intervalMax)
        }
    }

    func createConnection(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let scanInterval = try r.readUInt16("LE_Scan_Interval")
        let scanWindow = try r.readUInt16("LE_Scan_Window")
        let filterPolicy = try r.readUInt8("Initiator_Filter_Policy")
        let peerType = try r.readUInt8("Peer_Address_Type")
        let peer = try r.readAddress(type: BluetoothAddress.AddressType(hciValue: peerType), "Peer_Address")
        let ownAddressType = try r.readUInt8("Own_Address_Type")
        let parameters = try ConnectionParameters(from: &r)
        try r.expectEnd("LE_Create_Connection")
        let scanValid = (0x0004...0x4000).contains(scanInterval) && (0x0004...scanInterval).contains(scanWindow)
        startInitiating(
            Op.leCreateConnection, c, isExtended: false, filterPolicy: filterPolicy, peerType: peerType, peer: peer,
            ownAddressType: ownAddressType, scanValid: scanValid, scanInterval: scanInterval, scanWindow: scanWindow,
            parameters: parameters)
    }

    func extendedCreateConnection(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let filterPolicy = try r.readUInt8("Initiator_Filter_Policy")
        let ownAddressType = try r.readUInt8("Own_Address_Type")
        let peerType = try r.readUInt8("Peer_Address_Type")
        let peer = try r.readAddress(type: BluetoothAddress.AddressType(hciValue: peerType), "Peer_Address")
        let phys = try r.readUInt8("Initiating_PHYs")
        var blocks: [(scanInterval: UInt16, scanWindow: UInt16, parameters: ConnectionParameters)] = []
        for bit in 0..<3 where phys & (1 << UInt8(bit)) != 0 {
            let scanInterval = try r.readUInt16("Scan_Interval")
            let scanWindow = try r.readUInt16("Scan_Window")
            blocks.append((scanInterval, scanWindow, try ConnectionParameters(from: &r)))
        }
        try r.expectEnd("LE_Extended_Create_Connection")
        let op = Op.leExtendedCreateConnection
        // The initiator scans on 1M or Coded; 2M alone cannot be used to find the advertiser.
        guard phys & ~0x07 == 0, phys & 0x05 != 0, let first = blocks.first else {
            return c.commandStatus(op, Status.invalidParameters)
        }
        guard phys & ~c.supportedPHYMask == 0 else { return c.commandStatus(op, Status.unsupportedFeature) }
        let scanValid = blocks.allSatisfy { $0.scanInterval >= 0x0004 && (0x0004...$0.scanInterval).contains($0.scanWindow) }
            && blocks.allSatisfy(\.parameters.isValid)
        startInitiating(
            op, c, isExtended: true, filterPolicy: filterPolicy, peerType: peerType, peer: peer,
            ownAddressType: ownAddressType, scanValid: scanValid, scanInterval: first.scanInterval,
            scanWindow: first.scanWindow, parameters: first.parameters)
    }

    private func startInitiating(
        _ op: UInt16, _ c: ControllerState, isExtended: Bool, filterPolicy: UInt8, peerType: UInt8, peer: BluetoothAddress,
        ownAddressType: UInt8, scanValid: Bool, scanInterval: UInt16, scanWindow: UInt16, parameters: ConnectionParameters
    ) {
        guard c.initiator == nil else { return c.commandStatus(op, Status.commandDisallowed) }
        guard scanValid, parameters.isValid, filterPolicy <= 0x01, peerType <= 0x03, ownAddressType <= 0x03,
            c.ownAddress(type: ownAddressType) != nil
        else { return c.commandStatus(op, Status.invalidParameters) }
        if filterPolicy == 0, c.connections.values.contains(where: { id in
            guard let connection = connections[id], let side = connection.side(of: c.index) else { return false }
            return Self.sameDevice(connection.ends[1 - side].address, peer)
        }) {
            return c.commandStatus(op, Status.connectionAlreadyExists)
        }
        c.commandStatus(op, Status.success)
        c.initiator = Initiator(
            isExtended: isExtended, filterPolicy: filterPolicy, peerAddress: peer, ownAddressType: ownAddressType,
            scanInterval: UInt32(scanInterval), scanWindow: UInt32(scanWindow),
            connectionIntervalMin: parameters.intervalMin, maxLatency: parameters.latency,
            supervisionTimeout: parameters.timeout, startedAt: now)
        if !timing.modelsRadio { sweepAdvertisers(for: c.index) }
    }

    /// LE Create Connection Cancel: Command Complete, then the connection complete event with Unknown
    /// Connection Identifier (0x02) (Core Vol 4 Part E §7.8.13); without a pending create, Command Disallowed.
    func createConnectionCancel(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        try r.expectEnd("LE_Create_Connection_Cancel")
        let op = Op.leCreateConnectionCancel
        guard let initiator = c.initiator else { return c.commandComplete(op, [Status.commandDisallowed]) }
        c.initiator = nil
        c.commandComplete(op, [Status.success])
        sendConnectionComplete(
            c, status: Status.unknownConnectionIdentifier, handle: 0, role: 0, peer: initiator.peerAddress,
            interval: 0, latency: 0, timeout: 0, clockAccuracy: 0)
    }

    /// Disconnect: Command Status, then Disconnection Complete on both sides; the local host is told
    /// Connection Terminated By Local Host (0x16), the remote host the reason given.
    func disconnect(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let handle = try r.readUInt16("Connection_Handle")
        let reason = try r.readUInt8("Reason")
        try r.expectEnd("Disconnect")
        let op = Op.disconnect
        guard let (connection, side) = connection(handle, of: c) else {
            return c.commandStatus(op, Status.unknownConnectionIdentifier)
        }
        // Core Vol 4 Part E §7.1.6: the reasons a host may give.
        guard [0x05, 0x13, 0x14, 0x15, 0x1A, 0x29, 0x3B].contains(reason) else {
            return c.commandStatus(op, Status.invalidParameters)
        }
        guard !connection.procedures.contains(where: { if case .terminate = $0 { return true } else { return false } })
        else { return c.commandStatus(op, Status.commandDisallowed) }
        c.commandStatus(op, Status.success)
        start(.terminate(initiator: side, reason: reason), on: connection)
    }
}
