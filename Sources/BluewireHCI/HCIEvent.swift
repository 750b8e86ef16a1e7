import BluewireCore

/// An HCI event from the controller (Core Vol 4 Part E §5.4.4 framing, §7.7 events).
///
/// `init(decoding:)` takes the packet after the H4 indicator (event code, Parameter_Total_Length,
/// parameters). Events this module does not interpret become `.unknown` (never an error); a known
/// event too short for its fields is a `DecodeError` (layer "hci") naming the field, with the
/// offset from the start of the packet. Nothing is copied: slices share the packet's storage.
public enum HCIEvent: Hashable, Sendable {
    case commandComplete(CommandComplete)
    case commandStatus(CommandStatus)
    case disconnectionComplete(DisconnectionComplete)
    case numberOfCompletedPackets(NumberOfCompletedPackets)
    /// Code 0x08 (v1) or 0x59 (v2, with the key size).
    case encryptionChange(EncryptionChange)
    case encryptionKeyRefreshComplete(EncryptionKeyRefreshComplete)
    case hardwareError(hardwareCode: UInt8)
    case readRemoteVersionInformationComplete(ReadRemoteVersionInformationComplete)
    case leMeta(LEMetaEvent)
    case unknown(code: HCIEventCode, parameters: ArraySlice<UInt8>)

    public var code: HCIEventCode {
        switch self {
        case .commandComplete: .commandComplete
        case .commandStatus: .commandStatus
        case .disconnectionComplete: .disconnectionComplete
        case .numberOfCompletedPackets: .numberOfCompletedPackets
        case .encryptionChange(let e): e.encryptionKeySize == nil ? .encryptionChangeV1 : .encryptionChangeV2
        case .encryptionKeyRefreshComplete: .encryptionKeyRefreshComplete
        case .hardwareError: .hardwareError
        case .readRemoteVersionInformationComplete: .readRemoteVersionInformationComplete
        case .leMeta: .leMeta
        case .unknown(let code, _): code
        }
    }

    @inlinable
    public init(decoding payload: [UInt8]) throws(DecodeError) {
        try self.init(decoding: payload[...])
    }

    @inlinable @inline(__always)
    public init(decoding payload: ArraySlice<UInt8>) throws(DecodeError) {
        // Advertising reports are most of what a controller sends while scanning, thousands a
        // second: a complete LE (Extended) Advertising Report event is recognised from its first
        // four octets and built here, inlined into the caller. Its reports are decoded when
        // iterated. Every other event, and every malformed one, takes the general decoder.
        let s = payload.startIndex
        if payload.count >= 4, payload[s] == 0x3E {
            let length = Int(payload[s + 1])
            let subevent = payload[s + 2]
            if length >= 2, payload.count - 2 >= length, subevent == 0x02 || subevent == 0x0D {
                let packet = payload[s..<(s + 2 + length)]
                let numReports = payload[s + 3]
                self = .leMeta(
                    subevent == 0x02
                        ? .advertisingReport(LEReportList(numReports: numReports, packet: packet, firstReport: s + 4))
                        : .extendedAdvertisingReport(LEReportList(numReports: numReports, packet: packet, firstReport: s + 4)))
                return
            }
        }
        try self.init(checkedDecoding: payload)
    }

    /// Every event, field by field, with errors naming the field and its offset.
    @usableFromInline
    init(checkedDecoding payload: ArraySlice<UInt8>) throws(DecodeError) {
        var header = ByteReader(payload, layer: "hci")
        let code = HCIEventCode(rawValue: try header.readUInt8("Event_Code"))
        let length = Int(try header.readUInt8("Parameter_Total_Length"))
        try header.require(length, "Parameters")
        // Bytes past Parameter_Total_Length are not part of this event.
        let end = header.index + length
        var r = ByteReader(payload[payload.startIndex..<end], layer: "hci")
        try r.skip(2, "Parameter_Total_Length")
        switch code {
        case .commandComplete:
            let credits = try r.readUInt8("Num_HCI_Command_Packets")
            let opcode = HCIOpcode(rawValue: try r.readUInt16("Command_Opcode"))
            self = .commandComplete(CommandComplete(numHCICommandPackets: credits, commandOpcode: opcode, returnParameters: r.readRemaining()))
        case .commandStatus:
            let status = HCIStatus(try r.readUInt8("Status"))
            let credits = try r.readUInt8("Num_HCI_Command_Packets")
            let opcode = HCIOpcode(rawValue: try r.readUInt16("Command_Opcode"))
            self = .commandStatus(CommandStatus(status: status, numHCICommandPackets: credits, commandOpcode: opcode))
        case .disconnectionComplete:
            let status = HCIStatus(try r.readUInt8("Status"))
            let handle = try r.readUInt16("Connection_Handle") & 0x0FFF
            self = .disconnectionComplete(DisconnectionComplete(status: status, connectionHandle: handle, reason: HCIStatus(try r.readUInt8("Reason"))))
        case .numberOfCompletedPackets:
            let n = try r.readUInt8("Num_Handles")
            let entries = try r.readBytes(Int(n) * 4, "Connection_Handle")
            self = .numberOfCompletedPackets(NumberOfCompletedPackets(numHandles: n, entries: entries))
        case .encryptionChangeV1, .encryptionChangeV2:
            let status = HCIStatus(try r.readUInt8("Status"))
            let handle = try r.readUInt16("Connection_Handle") & 0x0FFF
            let enabled = try r.readUInt8("Encryption_Enabled")
            let keySize: UInt8? = code == .encryptionChangeV2 ? try r.readUInt8("Encryption_Key_Size") : nil
            self = .encryptionChange(EncryptionChange(status: status, connectionHandle: handle, encryptionEnabled: enabled, encryptionKeySize: keySize))
        case .encryptionKeyRefreshComplete:
            let status = HCIStatus(try r.readUInt8("Status"))
            self = .encryptionKeyRefreshComplete(EncryptionKeyRefreshComplete(status: status, connectionHandle: try r.readUInt16("Connection_Handle") & 0x0FFF))
        case .hardwareError:
            self = .hardwareError(hardwareCode: try r.readUInt8("Hardware_Code"))
        case .readRemoteVersionInformationComplete:
            let status = HCIStatus(try r.readUInt8("Status"))
            let handle = try r.readUInt16("Connection_Handle") & 0x0FFF
            let version = try r.readUInt8("Version")
            let company = try r.readUInt16("Company_Identifier")
            let sub = try r.readUInt16("Subversion")
            self = .readRemoteVersionInformationComplete(ReadRemoteVersionInformationComplete(
                status: status, connectionHandle: handle, version: version, manufacturerName: company, subversion: sub))
        case .leMeta:
            let sub = LESubeventCode(rawValue: try r.readUInt8("Subevent_Code"))
            self = .leMeta(try LEMetaEvent(subevent: sub, reader: &r))
        default:
            self = .unknown(code: code, parameters: r.readRemaining())
        }
    }

    /// Decodes an HCI packet of type `.event`; other packet types are `.unsupported`.
    @inlinable
    public init(packet: HCIPacket) throws(DecodeError) {
        guard packet.type == .event else {
            throw DecodeError(.unsupported(UInt64(packet.type.rawValue)), layer: "hci", field: "Packet_Type", offset: 0)
        }
        try self.init(decoding: packet.payload)
    }
}
