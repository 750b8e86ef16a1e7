import BluewireCore

/// Link-layer encryption as the hosts see it (Core Vol 6 Part B §5.1.3; Vol 4 Part E §7.8.24-26,
/// §7.7.8, §7.7.39, §7.7.65.5). No cipher runs — the link carries plaintext — but the handshake is
/// the controller's: the central's LE Enable Encryption gives the peripheral's host LE Long Term Key
/// Request with the same Rand and EDIV, and the link is encrypted only when the peripheral's host
/// answers with the central's key. Then both hosts get Encryption Change (Encryption Key Refresh
/// Complete on a link already encrypted). A negative reply gives the central PIN or Key Missing
/// (0x06), as LL_REJECT_EXT_IND does; a different key gives both sides 0x06 too, standing for the
/// MIC failure the real link layer would meet.
extension LinkWorld {
    /// LE Enable Encryption: central only (Command Disallowed on a peripheral's handle).
    func enableEncryption(_ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let handle = try r.readUInt16("Connection_Handle")
        let rand = Array(try r.readBytes(8, "Random_Number"))
        let ediv = try r.readUInt16("Encrypted_Diversifier")
        let key = Array(try r.readBytes(16, "Long_Term_Key"))
        try r.expectEnd("LE_Enable_Encryption")
        guard let (connection, side) = connection(handle, of: c) else {
            return c.commandStatus(Op.leEnableEncryption, Status.unknownConnectionIdentifier)
        }
        guard side == 0, connection.requestedKey == nil else {
            return c.commandStatus(Op.leEnableEncryption, Status.commandDisallowed)
        }
        c.commandStatus(Op.leEnableEncryption, Status.success)
        connection.requestedKey = key
        connection.requestedKeyIdentity = (rand, ediv)
        start(.encryptionStart, on: connection)
    }

    /// LE Long Term Key Request Reply / Negative Reply, from the peripheral's host.
    func longTermKeyReply(_ opcode: UInt16, _ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        let handle = try r.readUInt16("Connection_Handle")
        var key: [UInt8]?
        if opcode == Op.leLongTermKeyRequestReply { key = Array(try r.readBytes(16, "Long_Term_Key")) }
        try r.expectEnd(opcode == Op.leLongTermKeyRequestReply ? "LE_Long_Term_Key_Request_Reply" : "LE_Long_Term_Key_Request_Negative_Reply")
        var out: [UInt8] = []
        guard let (connection, side) = connection(handle, of: c) else {
            out = [Status.unknownConnectionIdentifier]
            out.appendLE(handle)
            return c.commandComplete(opcode, out)
        }
        guard side == 1, connection.requestedKey != nil else {
            out = [Status.commandDisallowed]
            out.appendLE(handle)
            return c.commandComplete(opcode, out)
        }
        out = [Status.success]
        out.appendLE(handle)
        c.commandComplete(opcode, out)
        start(.encryptionResponse(key: key), on: connection)
    }

    /// The peripheral's controller asks its host for the key (LE Long Term Key Request).
    func requestLongTermKey(on connection: LinkConnection) {
        guard let identity = connection.requestedKeyIdentity, let c = controller(of: connection, side: 1) else { return }
        var out: [UInt8] = []
        out.appendLE(connection.ends[1].handle)
        out.append(contentsOf: identity.rand)
        out.appendLE(identity.ediv)
        c.sendLEMeta(LESubevent.longTermKeyRequest, out)
    }

    /// Both hosts learn whether the link is now encrypted with the central's key.
    func completeEncryption(on connection: LinkConnection, peripheralKey: [UInt8]?) {
        guard let requested = connection.requestedKey else { return }
        connection.requestedKey = nil
        connection.requestedKeyIdentity = nil
        let refresh = connection.isEncrypted
        let status: UInt8
        let sides: [Int]
        switch peripheralKey {
        case requested?:
            status = Status.success
            sides = [0, 1]
            connection.isEncrypted = true
        case nil:
            // LL_REJECT_EXT_IND (PIN or Key Missing) to the central; the peripheral's host said so itself.
            status = Status.pinOrKeyMissing
            sides = [0]
        default:
            status = Status.pinOrKeyMissing
            sides = [0, 1]
        }
        for side in sides {
            guard let c = controller(of: connection, side: side) else { continue }
            var out: [UInt8] = [status]
            out.appendLE(connection.ends[side].handle)
            if refresh && status == Status.success {
                c.sendEvent(EventCode.encryptionKeyRefreshComplete, out)
            } else {
                out.append(connection.isEncrypted ? 0x01 : 0x00)
                c.sendEvent(EventCode.encryptionChange, out)
            }
        }
    }
}
