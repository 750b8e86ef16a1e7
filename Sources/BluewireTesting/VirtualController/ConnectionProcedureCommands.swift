import BluewireCore

/// Commands that start link-layer control procedures on a connection: connection update, data length,
/// PHY, remote version and features (Core Vol 4 Part E §7.8.18, 7.8.33, 7.8.49, 7.1.23, 7.8.21).
extension LinkWorld {
    func connectionUpdate(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let handle = try r.readUInt16("Connection_Handle")
        let parameters = try ConnectionParameters(from: &r)
        try r.expectEnd("LE_Connection_Update")
        let op = Op.leConnectionUpdate
        guard let (connection, side) = connection(handle, of: c) else {
            return c.commandStatus(op, Status.unknownConnectionIdentifier)
        }
        guard parameters.isValid else { return c.commandStatus(op, Status.invalidParameters) }
        c.commandStatus(op, Status.success)
        // A peripheral can only ask, through the Connection Parameters Request procedure, which both
        // sides must support; otherwise the update fails with Unsupported Remote Feature.
        let peer = controllers[connection.ends[1 - side].controller]
        if side == 1 && !(c.supports.contains(.connectionParametersRequestProcedure)
            && peer.supports.contains(.connectionParametersRequestProcedure))
        {
            var out: [UInt8] = [Status.unsupportedRemoteFeature]
            out.appendLE(connection.ends[side].handle)
            out.appendLE(connection.interval)
            out.appendLE(connection.latency)
            out.appendLE(connection.supervisionTimeout)
            return c.sendLEMeta(LESubevent.connectionUpdateComplete, out)
        }
        start(
            .connectionUpdate(
                initiator: side, interval: parameters.intervalMin, latency: parameters.latency, timeout: parameters.timeout),
            on: connection)
    }

    /// LE Set Data Length: Command Complete (status, handle), then the data length update procedure.
    func setDataLength(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let handle = try r.readUInt16("Connection_Handle")
        let octets = try r.readUInt16("TX_Octets")
        let time = try r.readUInt16("TX_Time")
        try r.expectEnd("LE_Set_Data_Length")
        let op = Op.leSetDataLength
        var out: [UInt8] = []
        guard let (connection, side) = connection(handle, of: c) else {
            out = [Status.unknownConnectionIdentifier]
            out.appendLE(handle)
            return c.commandComplete(op, out)
        }
        guard (0x001B...0x00FB).contains(octets), (0x0148...0x4290).contains(time) else {
            out = [Status.invalidParameters]
            out.appendLE(handle)
            return c.commandComplete(op, out)
        }
        connection.ends[side].maxTxOctets = min(octets, c.configuration.supportedMaxOctets)
        out = [Status.success]
        out.appendLE(handle)
        c.commandComplete(op, out)
        start(.dataLengthUpdate, on: connection)
    }

    func writeSuggestedDefaultDataLength(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let octets = try r.readUInt16("Suggested_Max_TX_Octets")
        let time = try r.readUInt16("Suggested_Max_TX_Time")
        try r.expectEnd("LE_Write_Suggested_Default_Data_Length")
        let op = Op.leWriteSuggestedDefaultDataLength
        guard (0x001B...0x00FB).contains(octets), (0x0148...0x4290).contains(time) else {
            return c.commandComplete(op, [Status.invalidParameters])
        }
        c.suggestedMaxTxOctets = octets
        c.commandComplete(op, [Status.success])
    }

    func readPHY(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let handle = try r.readUInt16("Connection_Handle")
        try r.expectEnd("Connection_Handle")
        guard let (connection, side) = connection(handle, of: c) else {
            var out: [UInt8] = [Status.unknownConnectionIdentifier]
            out.appendLE(handle)
            out.append(contentsOf: [0, 0])
            return c.commandComplete(Op.leReadPHY, out)
        }
        var out: [UInt8] = [Status.success]
        out.appendLE(handle)
        out.append(connection.ends[side].txPHY)
        out.append(connection.ends[1 - side].txPHY)
        c.commandComplete(Op.leReadPHY, out)
    }

    func setDefaultPHY(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let all = try r.readUInt8("All_PHYs")
        let tx = try r.readUInt8("TX_PHYs")
        let rx = try r.readUInt8("RX_PHYs")
        try r.expectEnd("LE_Set_Default_PHY")
        let op = Op.leSetDefaultPHY
        guard all <= 0x03, tx <= 0x07, rx <= 0x07, all & 0x01 != 0 || tx != 0, all & 0x02 != 0 || rx != 0 else {
            return c.commandComplete(op, [Status.invalidParameters])
        }
        let requested = (all & 0x01 == 0 ? tx : 0) | (all & 0x02 == 0 ? rx : 0)
        guard requested & ~c.supportedPHYMask == 0 else { return c.commandComplete(op, [Status.unsupportedFeature]) }
        c.defaultPHYs = (all, tx, rx)
        c.commandComplete(op, [Status.success])
    }

    func setPHY(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let handle = try r.readUInt16("Connection_Handle")
        let all = try r.readUInt8("All_PHYs")
        let tx = try r.readUInt8("TX_PHYs")
        let rx = try r.readUInt8("RX_PHYs")
        _ = try r.readUInt16("PHY_Options")
        try r.expectEnd("LE_Set_PHY")
        let op = Op.leSetPHY
        guard let (connection, side) = connection(handle, of: c) else {
            return c.commandStatus(op, Status.unknownConnectionIdentifier)
        }
        // A preference for no PHY at all in a direction the host did not leave open is meaningless.
        guard all <= 0x03, tx <= 0x07, rx <= 0x07, all & 0x01 != 0 || tx != 0, all & 0x02 != 0 || rx != 0 else {
            return c.commandStatus(op, Status.invalidParameters)
        }
        let requested = (all & 0x01 == 0 ? tx : 0) | (all & 0x02 == 0 ? rx : 0)
        guard requested & ~c.supportedPHYMask == 0 else { return c.commandStatus(op, Status.unsupportedFeature) }
        c.commandStatus(op, Status.success)
        start(.phyUpdate(initiator: side, allPHYs: all, txPHYs: tx, rxPHYs: rx), on: connection)
    }

    /// Read Remote Version Information and LE Read Remote Features: Command Status, then the answer from
    /// the peer's link layer.
    func readRemoteInformation(_ opcode: UInt16, _ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let handle = try r.readUInt16("Connection_Handle")
        try r.expectEnd("Connection_Handle")
        guard let (connection, side) = connection(handle, of: c) else {
            return c.commandStatus(opcode, Status.unknownConnectionIdentifier)
        }
        c.commandStatus(opcode, Status.success)
        start(opcode == Op.leReadRemoteFeatures ? .remoteFeatures(requester: side) : .remoteVersion(requester: side),
              on: connection)
    }
}
