import BluewireAnalysis
import BluewireCore
import BluewireSnoop
import Testing

/// A btsnoop capture built packet by packet, read back through the capture reader.
struct AnalyzeScript {
    var bytes = BTSnoopWriter().fileHeader
    /// Microseconds since the Unix epoch of the next packet; advances by 1 ms per packet unless set.
    var time: Int64 = 1_700_000_000_000_000

    var records: [CaptureRecord] { CaptureReader.readAll(bytes).records }
    var analysis: CaptureAnalysis { CaptureAnalyzer.analyze(records) }

    mutating func packet(_ type: HCIPacketType, _ payload: [UInt8], _ direction: PacketDirection, at time: Int64? = nil) {
        if let time { self.time = time }
        BTSnoopWriter().appendRecord(
            HCIPacket(type: type, payload: payload), direction: direction,
            timestamp: BTSnoopWriter.timestamp(unixMicroseconds: self.time), to: &bytes)
        self.time += 1_000
    }

    static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

    mutating func connectionComplete(handle: UInt16, peer: BluetoothAddress, central: Bool = true, interval: UInt16 = 24) {
        var parameters: [UInt8] = [0x01, 0x00] + Self.le16(handle) + [central ? 0 : 1, peer.type.rawValue]
        parameters += peer.littleEndianBytes + Self.le16(interval) + Self.le16(0) + Self.le16(500) + [0x00]
        packet(.event, [0x3E, UInt8(parameters.count)] + parameters, .controllerToHost)
    }

    mutating func disconnection(handle: UInt16) {
        packet(.event, [0x05, 0x04, 0x00] + Self.le16(handle) + [0x13], .controllerToHost)
    }

    /// One ATT PDU in one ACL packet.
    mutating func att(_ handle: UInt16, _ direction: PacketDirection, _ pdu: [UInt8], at time: Int64? = nil) {
        let l2cap = Self.le16(UInt16(pdu.count)) + Self.le16(0x0004) + pdu
        let flags: UInt16 = direction == .hostToController ? 0x0000 : 0x2000
        packet(.acl, Self.le16(handle | flags) + Self.le16(UInt16(l2cap.count)) + l2cap, direction, at: time)
    }

    /// An ATT PDU split into ACL fragments of at most `fragment` octets.
    mutating func fragmentedATT(_ handle: UInt16, _ direction: PacketDirection, _ pdu: [UInt8], fragment: Int) {
        let l2cap = Self.le16(UInt16(pdu.count)) + Self.le16(0x0004) + pdu
        var start = 0
        while start < l2cap.count {
            let end = min(start + fragment, l2cap.count)
            let boundary: UInt16 = start == 0 ? (direction == .hostToController ? 0x0000 : 0x2000) : 0x1000
            let part = Array(l2cap[start..<end])
            packet(.acl, Self.le16(handle | boundary) + Self.le16(UInt16(part.count)) + part, direction)
            start = end
        }
    }
}

private let deviceA = BluetoothAddress(0xC0, 0x00, 0x00, 0x00, 0x00, 0x0A, type: .random)
private let deviceB = BluetoothAddress(0x00, 0x11, 0x22, 0x33, 0x44, 0x55)
private let toPeer = PacketDirection.hostToController
private let fromPeer = PacketDirection.controllerToHost

@Suite("CaptureAnalyzer on synthetic captures")
struct AnalyzeSyntheticCaptureTests {
    @Test("a handle reused by a second device starts from an empty table: nothing of the first connection leaks")
    func gattStateIsPerConnection() throws {
        var script = AnalyzeScript()
        script.connectionComplete(handle: 0x0040, peer: deviceA)
        script.att(0x0040, toPeer, [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])            // Read By Group Type
        script.att(0x0040, fromPeer, [0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x0F, 0x18])     // Battery 1..5
        script.att(0x0040, toPeer, [0x08, 0x01, 0x00, 0x05, 0x00, 0x03, 0x28])            // Read By Type 0x2803
        script.att(0x0040, fromPeer, [0x09, 0x07, 0x02, 0x00, 0x12, 0x03, 0x00, 0x19, 0x2A]) // 0x2A19 @3
        script.att(0x0040, toPeer, [0x0A, 0x03, 0x00])
        script.att(0x0040, fromPeer, [0x0B, 0x64])
        script.disconnection(handle: 0x0040)
        script.connectionComplete(handle: 0x0040, peer: deviceB)
        script.att(0x0040, toPeer, [0x12, 0x04, 0x00, 0x01, 0x00])                         // write 0x0004
        script.att(0x0040, toPeer, [0x0A, 0x03, 0x00])
        script.att(0x0040, fromPeer, [0x0B, 0x01, 0x02])

        let analysis = script.analysis
        try #require(analysis.connections.count == 2)
        let (a, b) = (analysis.connections[0], analysis.connections[1])
        #expect(a.peerAddress == deviceA && b.peerAddress == deviceB)
        #expect(a.closedAtRecord != nil && b.closedAtRecord == nil)
        #expect(a.peerServer.table.characteristics[0x0002]?.uuid == BluetoothUUID(0x2A19))
        #expect(b.peerServer.table.isEmpty, "the second device's table must not inherit the first's")
        #expect(a.peerServer.activity(of: 0x0003).lastReadValue == [0x64])
        #expect(b.peerServer.activity(of: 0x0003).lastReadValue == [0x01, 0x02])
        #expect(a.peerServer.activity(of: 0x0004).writes == 0)
        #expect(b.peerServer.activity(of: 0x0004).writeRequests == 1)
        let devices = analysis.devices
        #expect(devices.map(\.address) == [deviceA, deviceB])
        #expect(try devices[0].database()[handle: 0x0003]?.cachedValue == [0x64])
        #expect(try devices[1].database().attributes.isEmpty)
    }

    @Test("a long read assembles its Read Blob parts into one value and counts one read")
    func readBlobAssembly() {
        var script = AnalyzeScript()
        script.connectionComplete(handle: 0x0001, peer: deviceB)
        let value = (0..<49).map { UInt8($0) }
        script.att(0x0001, toPeer, [0x0A, 0x20, 0x00])
        script.att(0x0001, fromPeer, [0x0B] + value[0..<22])
        script.att(0x0001, toPeer, [0x0C, 0x20, 0x00, 22, 0x00])
        script.att(0x0001, fromPeer, [0x0D] + value[22..<44])
        script.att(0x0001, toPeer, [0x0C, 0x20, 0x00, 44, 0x00])
        script.att(0x0001, fromPeer, [0x0D] + value[44...])
        let activity = script.analysis.connections[0].peerServer.activity(of: 0x0020)
        #expect(activity.reads == 1)
        #expect(activity.lastReadValue == value)
        #expect(activity.readBytes == value.count)
    }

    @Test("an executed prepared write commits its parts in place; a cancelled one commits nothing")
    func preparedWrites() {
        var script = AnalyzeScript()
        script.connectionComplete(handle: 0x0001, peer: deviceB)
        script.att(0x0001, toPeer, [0x16, 0x30, 0x00, 0x00, 0x00, 0xA1, 0xA2, 0xA3])
        script.att(0x0001, fromPeer, [0x17, 0x30, 0x00, 0x00, 0x00, 0xA1, 0xA2, 0xA3])
        script.att(0x0001, toPeer, [0x16, 0x30, 0x00, 0x03, 0x00, 0xB1, 0xB2])
        script.att(0x0001, fromPeer, [0x17, 0x30, 0x00, 0x03, 0x00, 0xB1, 0xB2])
        script.att(0x0001, toPeer, [0x18, 0x01])
        script.att(0x0001, fromPeer, [0x19])
        script.att(0x0001, toPeer, [0x16, 0x30, 0x00, 0x00, 0x00, 0xFF])
        script.att(0x0001, toPeer, [0x18, 0x00])
        let activity = script.analysis.connections[0].peerServer.activity(of: 0x0030)
        #expect(activity.preparedWrites == 1)
        #expect(activity.lastWrittenValue == [0xA1, 0xA2, 0xA3, 0xB1, 0xB2])
    }

    @Test("requests from the peer concern the local server; notifications the local device sends too")
    func localServerIsSeparate() {
        var script = AnalyzeScript()
        script.connectionComplete(handle: 0x0002, peer: deviceB, central: false)
        script.att(0x0002, fromPeer, [0x0A, 0x03, 0x00])
        script.att(0x0002, toPeer, [0x0B, 0x41, 0x42])
        script.att(0x0002, toPeer, [0x1B, 0x05, 0x00, 0x07])
        script.att(0x0002, fromPeer, [0x1B, 0x05, 0x00, 0x08])
        let connection = script.analysis.connections[0]
        #expect(connection.localRole == .peripheral)
        #expect(connection.localServer.activity(of: 0x0003).lastReadValue == [0x41, 0x42])
        #expect(connection.peerServer.activity(of: 0x0003).reads == 0)
        #expect(connection.localServer.activity(of: 0x0005).lastNotifiedValue == [0x07])
        #expect(connection.peerServer.activity(of: 0x0005).lastNotifiedValue == [0x08])
    }

    @Test("discovery by Find By Type Value, includes, Find Information and Read Using Characteristic UUID")
    func otherDiscoveryProcedures() throws {
        var script = AnalyzeScript()
        script.connectionComplete(handle: 0x0003, peer: deviceB)
        script.att(0x0003, toPeer, [0x06, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x0D, 0x18])
        script.att(0x0003, fromPeer, [0x07, 0x10, 0x00, 0x1F, 0x00])
        script.att(0x0003, toPeer, [0x08, 0x10, 0x00, 0x1F, 0x00, 0x02, 0x28])
        script.att(0x0003, fromPeer, [0x09, 0x08, 0x11, 0x00, 0x30, 0x00, 0x35, 0x00, 0x0F, 0x18])
        script.att(0x0003, toPeer, [0x08, 0x10, 0x00, 0x1F, 0x00, 0x03, 0x28])
        script.att(0x0003, fromPeer, [0x09, 0x07, 0x12, 0x00, 0x10, 0x13, 0x00, 0x37, 0x2A])
        script.att(0x0003, toPeer, [0x04, 0x14, 0x00, 0x1F, 0x00])
        script.att(0x0003, fromPeer, [0x05, 0x01, 0x14, 0x00, 0x02, 0x29])
        script.att(0x0003, toPeer, [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x37, 0x2A])
        script.att(0x0003, fromPeer, [0x09, 0x04, 0x13, 0x00, 0x06, 0x48])
        script.att(0x0003, toPeer, [0x0A, 0x20, 0x00])
        script.att(0x0003, fromPeer, [0x01, 0x0A, 0x20, 0x00, 0x02])
        let server = script.analysis.connections[0].peerServer
        let service = try #require(server.table.services[0x0010])
        #expect(service.uuid == BluetoothUUID(0x180D) && service.endHandle == 0x001F && service.isPrimary)
        #expect(server.table.includes[0x0011]?.includedServiceHandle == 0x0030)
        #expect(server.table.includes[0x0011]?.uuid == BluetoothUUID(0x180F))
        let tree = DiscoveredGATTTree(server.table)
        let characteristic = try #require(tree.services.first?.characteristics.first)
        #expect(characteristic.declaration.valueHandle == 0x0013)
        #expect(characteristic.descriptors.map(\.uuid) == [.clientCharacteristicConfiguration])
        #expect(server.activity(of: 0x0013).lastReadValue == [0x06, 0x48])
        #expect(server.activity(of: 0x0020).errors == 1)
        #expect(server.activity(of: 0x0020).lastError == .readNotPermitted)
    }

    @Test("ATT_MTU is the smaller Rx MTU of the exchange; PHY and data length changes land on their link")
    func mtuAndLinkChanges() {
        var script = AnalyzeScript()
        script.connectionComplete(handle: 0x0004, peer: deviceB)
        script.att(0x0004, toPeer, [0x02, 0xF7, 0x00])
        script.att(0x0004, fromPeer, [0x03, 0xB9, 0x00])
        script.packet(.event, [0x3E, 0x0B, 0x07] + AnalyzeScript.le16(0x0004) + [0xFB, 0x00, 0x48, 0x08, 0xFB, 0x00, 0x48, 0x08], fromPeer)
        script.packet(.event, [0x3E, 0x06, 0x0C, 0x00] + AnalyzeScript.le16(0x0004) + [0x02, 0x02], fromPeer)
        let connection = script.analysis.connections[0]
        #expect(connection.attMTU == 185)
        #expect(connection.dataLengthChanges.map(\.maxTxOctets) == [251])
        #expect(connection.phyUpdates.map { PHYUpdate.name(ofPHY: $0.txPHY) } == ["2M"])
    }

    @Test("a fragmented notification counts once, with its value whole")
    func fragmentedPDU() {
        var script = AnalyzeScript()
        script.connectionComplete(handle: 0x0005, peer: deviceB)
        let value = (0..<60).map { UInt8($0) }
        script.fragmentedATT(0x0005, fromPeer, [0x1B, 0x09, 0x00] + value, fragment: 27)
        let connection = script.analysis.connections[0]
        #expect(connection.received.aclPackets == 3)
        #expect(connection.received.attPDUs == 1)
        #expect(connection.attOpcodeCounts == [0x1B: 1])
        #expect(connection.peerServer.activity(of: 0x0009).lastNotifiedValue == value)
    }

    @Test("ACL on a handle never connected opens a connection of unknown peer, named after its handle")
    func captureStartingMidConnection() {
        var script = AnalyzeScript()
        script.att(0x0041, fromPeer, [0x1B, 0x09, 0x00, 0x01])
        let analysis = script.analysis
        #expect(analysis.connections.count == 1)
        #expect(analysis.connections[0].transport == .unknown)
        #expect(analysis.connections[0].startedInCapture == false)
        #expect(analysis.establishedConnections.isEmpty)
        #expect(analysis.devices.map(\.databaseFileName) == ["connection-0-handle-0x0041.json"])
    }

    @Test("throughput is ATT octets over the span from first to last ACL packet, per direction")
    func throughput() {
        var script = AnalyzeScript()
        script.connectionComplete(handle: 0x0006, peer: deviceB)
        script.att(0x0006, toPeer, [0x52, 0x10, 0x00] + [UInt8](repeating: 0, count: 97), at: 2_000_000_000)
        script.att(0x0006, fromPeer, [0x1B, 0x10, 0x00] + [UInt8](repeating: 0, count: 47), at: 2_000_500_000)
        script.att(0x0006, toPeer, [0x52, 0x10, 0x00] + [UInt8](repeating: 0, count: 97), at: 2_001_000_000)
        let connection = script.analysis.connections[0]
        #expect(connection.durationMicroseconds == 1_000_000)
        #expect(connection.sent.attBytes == 200)
        #expect(connection.sentATTBitsPerSecond == 1_600)
        #expect(connection.receivedATTBitsPerSecond == 400)
        #expect(connection.peerServer.activity(of: 0x0010).writeCommands == 2)
    }

    @Test("timestamps stepping backwards or across the whole range give a zero span, not a crash")
    func timestampsGoingBackwards() {
        var script = AnalyzeScript()
        script.connectionComplete(handle: 0x0007, peer: deviceB)
        script.att(0x0007, fromPeer, [0x1B, 0x01, 0x00, 0x01], at: 5_000_000)
        script.att(0x0007, fromPeer, [0x1B, 0x01, 0x00, 0x02], at: 4_000_000)
        #expect(script.analysis.connections[0].durationMicroseconds == 0)
        #expect(script.analysis.connections[0].receivedATTBitsPerSecond == nil)

        var analyzer = CaptureAnalyzer()
        for (i, record) in script.records.enumerated() {
            var record = record
            record.timestamp = i.isMultiple(of: 2) ? Int64.max : Int64.min
            analyzer.add(record)
        }
        #expect(analyzer.analysis.connections[0].durationMicroseconds == 0)
    }

    @Test("a truncated ACL packet is counted as an error on its connection and analysis goes on")
    func truncatedACL() {
        var script = AnalyzeScript()
        script.connectionComplete(handle: 0x0008, peer: deviceB)
        script.packet(.acl, [0x08, 0x20, 0x09, 0x00, 0x05, 0x00], fromPeer)
        script.att(0x0008, fromPeer, [0x1B, 0x01, 0x00, 0x01])
        let connection = script.analysis.connections[0]
        #expect(connection.aclDecodeErrors == 1)
        #expect(connection.received.attPDUs == 1)
    }
}
