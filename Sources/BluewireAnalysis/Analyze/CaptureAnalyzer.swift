import BluewireCore
import BluewireHCI
import BluewireL2CAP
import BluewireSnoop

/// Reconstructs, from a capture's records, every connection: its peer and roles, link parameter
/// changes, ATT MTU, the GATT tables its discovery revealed, and per attribute the reads, writes,
/// notifications and indications, with traffic counts and throughput per direction.
///
/// Sans-I/O and streaming: feed records in capture order with `add(_:)` (from a `CaptureReader`),
/// then read `analysis`. Bad packets are counted, never fatal. Captures may start mid-connection:
/// ACL traffic on a handle with no Connection Complete opens a connection of unknown peer.
public struct CaptureAnalyzer: Sendable {
    public private(set) var connections: [AnalyzedConnection] = []
    /// Index in `connections` of the link currently using each handle.
    var liveConnection: [UInt16: Int] = [:]
    /// One reassembler per direction: each keeps partial PDUs per handle (Core Vol 4 Part E §5.4.2).
    var outboundReassembler = L2CAPReassembler()
    var inboundReassembler = L2CAPReassembler()
    /// Credit based channels (LE CoC, enhanced, EATT bearers), tagged with their connection's index.
    var channels = CreditBasedChannelTracker()

    /// Records seen, HCI packets among them, and packets that failed to decode and belong to no connection.
    public private(set) var recordCount = 0
    public private(set) var packetCount = 0
    public private(set) var decodeErrors = 0
    /// Connection Complete events with a non-zero status (cancelled or failed attempts).
    public private(set) var failedConnectionAttempts = 0

    public init() {}

    /// The analysis so far.
    public var analysis: CaptureAnalysis {
        var connections = self.connections
        for channel in channels.channels where connections.indices.contains(channel.tag) {
            connections[channel.tag].channels.append(channel)
        }
        return CaptureAnalysis(
            connections: connections, recordCount: recordCount, packetCount: packetCount,
            decodeErrors: decodeErrors, failedConnectionAttempts: failedConnectionAttempts)
    }

    /// Analyzes every record of a capture held in memory (convenience for small files and tests).
    public static func analyze(_ records: some Sequence<CaptureRecord>) -> CaptureAnalysis {
        var analyzer = CaptureAnalyzer()
        for record in records { analyzer.add(record) }
        return analyzer.analysis
    }

    /// Feeds the next record of the capture.
    public mutating func add(_ record: CaptureRecord) {
        recordCount += 1
        guard let packet = record.packet else { return }
        packetCount += 1
        switch packet.type {
        case .event:
            event(packet.payload, record: record)
        case .acl:
            acl(packet.payload, record: record)
        case .command, .sco, .iso:
            break
        }
    }

    mutating func event(_ payload: ArraySlice<UInt8>, record: CaptureRecord) {
        let event: HCIEvent
        do {
            event = try HCIEvent(decoding: payload)
        } catch {
            decodeErrors += 1
            return
        }
        switch event {
        case .leMeta(.connectionComplete(let complete)), .leMeta(.enhancedConnectionComplete(let complete)):
            guard complete.status.isSuccess else {
                failedConnectionAttempts += 1
                return
            }
            let i = open(handle: complete.connectionHandle, transport: .le, record: record)
            connections[i].peerAddress = complete.peerAddress
            connections[i].localRole = complete.isCentral ? .central : .peripheral
            connections[i].parameterHistory.append(ConnectionParameters(
                recordIndex: record.index, interval: complete.connectionInterval,
                peripheralLatency: complete.peripheralLatency, supervisionTimeout: complete.supervisionTimeout))
        case .leMeta(.connectionUpdateComplete(let update)):
            guard update.status.isSuccess else { return }
            let i = connection(for: update.connectionHandle, transport: .le, record: record)
            connections[i].parameterHistory.append(ConnectionParameters(
                recordIndex: record.index, interval: update.connectionInterval,
                peripheralLatency: update.peripheralLatency, supervisionTimeout: update.supervisionTimeout))
        case .leMeta(.dataLengthChange(let change)):
            let i = connection(for: change.connectionHandle, transport: .le, record: record)
            connections[i].dataLengthChanges.append(DataLengthChange(
                recordIndex: record.index, maxTxOctets: change.maxTxOctets, maxTxTime: change.maxTxTime,
                maxRxOctets: change.maxRxOctets, maxRxTime: change.maxRxTime))
        case .leMeta(.phyUpdateComplete(let update)):
            let i = connection(for: update.connectionHandle, transport: .le, record: record)
            connections[i].phyUpdates.append(PHYUpdate(
                recordIndex: record.index, status: update.status, txPHY: update.txPHY, rxPHY: update.rxPHY))
        case .encryptionChange(let change):
            guard change.status.isSuccess, let i = liveConnection[change.connectionHandle] else { return }
            connections[i].noteEncryption(enabled: change.encryptionEnabled != 0, record: record.index)
        case .disconnectionComplete(let disconnection):
            guard disconnection.status.isSuccess, let i = liveConnection[disconnection.connectionHandle] else { return }
            connections[i].closedAtRecord = record.index
            connections[i].disconnectReason = disconnection.reason
            close(handle: disconnection.connectionHandle)
            channels.disconnected(handle: disconnection.connectionHandle, record: record.index)
        case .unknown(let code, let parameters) where code.rawValue == 0x03:
            classicConnectionComplete(parameters, record: record)
        default:
            break
        }
    }

    /// BR/EDR Connection Complete (Core Vol 4 Part E §7.7.3): Status, Connection_Handle, BD_ADDR,
    /// Link_Type, Encryption_Enabled. Only ACL links (Link_Type 0x01) carry L2CAP.
    mutating func classicConnectionComplete(_ parameters: ArraySlice<UInt8>, record: CaptureRecord) {
        guard parameters.count >= 11 else {
            decodeErrors += 1
            return
        }
        let s = parameters.startIndex
        guard parameters[s] == 0 else {
            failedConnectionAttempts += 1
            return
        }
        guard parameters[s + 9] == 0x01 else { return }
        let handle = (UInt16(parameters[s + 1]) | UInt16(parameters[s + 2]) << 8) & 0x0FFF
        var value: UInt64 = 0
        for k in (0..<6).reversed() { value = value << 8 | UInt64(parameters[s + 3 + k]) }
        let i = open(handle: handle, transport: .brEdr, record: record)
        connections[i].peerAddress = BluetoothAddress(value: value, type: .public)
    }

    mutating func acl(_ payload: ArraySlice<UInt8>, record: CaptureRecord) {
        let packet: ACLPacket
        do {
            packet = try ACLPacket(decoding: payload)
        } catch {
            // A packet shorter or longer than its header says (a truncating snoop filter, a damaged
            // file) is charged to its connection when the handle at least is there.
            guard payload.count >= 2 else {
                decodeErrors += 1
                return
            }
            let s = payload.startIndex
            let handle = (UInt16(payload[s]) | UInt16(payload[s + 1]) << 8) & 0x0FFF
            let i = connection(for: handle, transport: .unknown, record: record)
            connections[i].aclDecodeErrors += 1
            return
        }
        let i = connection(for: packet.handle, transport: .unknown, record: record)
        let outbound = record.direction == .hostToController
        connections[i].notePacket(at: record.timestamp)
        let result = outbound ? outboundReassembler.receive(packet) : inboundReassembler.receive(packet)
        updateTraffic(of: i, outbound: outbound) {
            $0.aclPackets += 1
            $0.aclBytes += packet.data.count
        }
        if result.error != nil { connections[i].reassemblyErrors += 1 }
        guard let pdu = result.pdu else { return }
        updateTraffic(of: i, outbound: outbound) {
            $0.l2capPDUs += 1
            switch pdu.channelID {
            case .att:
                $0.attPDUs += 1
                $0.attBytes += pdu.payload.count
            case .smp: $0.smpPDUs += 1
            case .leSignaling: $0.signalingPDUs += 1
            default: break
            }
        }
        if pdu.channelID == .att {
            connections[i].analyzeATT(pdu.payload, direction: record.direction)
        } else if pdu.channelID == .leSignaling {
            channels.signaling(pdu.payload, handle: packet.handle, outbound: outbound, record: record.index, tag: i)
        } else if pdu.channelID.isDynamic,
                  let frame = channels.kFrame(pdu.payload, handle: packet.handle, cid: pdu.channelID.rawValue, outbound: outbound),
                  frame.channel.psm == 0x0027, frame.completesSDU, let length = frame.sduLength, pdu.payload.count == length + 2 {
            // An Enhanced ATT bearer's SDU is an ATT PDU (Core Vol 3 Part G §5.3.2): counted like CID 0x0004's.
            connections[i].analyzeATT(pdu.payload.dropFirst(2), direction: record.direction)
        } else if pdu.channelID == .smp {
            connections[i].analyzeSMP(pdu.payload, fromLocal: outbound, record: record.index)
        }
    }

    mutating func updateTraffic(of i: Int, outbound: Bool, _ body: (inout DirectionTraffic) -> Void) {
        if outbound { body(&connections[i].sent) } else { body(&connections[i].received) }
    }

    /// Starts a new connection on `handle`; whatever used the handle before is closed first.
    mutating func open(handle: UInt16, transport: LinkTransport, record: CaptureRecord) -> Int {
        if liveConnection[handle] != nil { close(handle: handle) }
        let i = connections.count
        connections.append(AnalyzedConnection(index: i, handle: handle, transport: transport, openedAtRecord: record.index))
        liveConnection[handle] = i
        return i
    }

    /// The live connection on `handle`, or a new one for a link set up before the capture started.
    mutating func connection(for handle: UInt16, transport: LinkTransport, record: CaptureRecord) -> Int {
        if let i = liveConnection[handle] {
            if connections[i].transport == .unknown { connections[i].transport = transport }
            return i
        }
        return open(handle: handle, transport: transport, record: record)
    }

    mutating func close(handle: UInt16) {
        liveConnection[handle] = nil
        outboundReassembler.disconnected(handle: handle)
        inboundReassembler.disconnected(handle: handle)
    }
}
