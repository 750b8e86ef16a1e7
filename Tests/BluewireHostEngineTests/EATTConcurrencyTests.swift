import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import BluewireL2CAP
import BluewireSnoop
import BluewireTesting
import Testing

/// Enhanced ATT between two engines on the virtual link with radio timing (Core Vol 3 Part G §5.3.2,
/// Part F §3.3.2): many callers' reads spread over five bearers with `.gattOnAnyEATTBearer`, and the
/// session's btsnoop capture, written with `BTSnoopWriter` and read back with `CaptureReader`, shows
/// at most one request outstanding per bearer.
@Suite("Host engine: EATT reads from many callers over five bearers")
struct EATTConcurrencyTests {
    static let callers = 16
    static let reads = 100

    /// 16 characteristics 0xFF01…0xFF10 (read), each with a value of its own.
    static func database() throws -> (GATTDatabase, [UInt16]) {
        var builder = GATTDatabaseBuilder()
        try builder.addService(BluetoothUUID(0xFF00))
        var handles: [UInt16] = []
        for caller in 0..<callers {
            let added = try builder.addCharacteristic(
                BluetoothUUID(UInt16(0xFF01 + caller)), properties: [.read], permissions: [.read], value: .cached(value(caller)))
            handles.append(added.valueHandle)
        }
        return (builder.build(), handles)
    }

    static func value(_ caller: Int) -> [UInt8] { (0..<20).map { UInt8(truncatingIfNeeded: caller &* 31 &+ $0) } }

    @Test("100 concurrent reads from 16 callers complete over 5 bearers, never two outstanding on one bearer (capture)")
    func concurrentReads() throws {
        var scene = try EnginesOnVirtualLink(timing: .radio(), recordsPackets: true)
        let (database, handles) = try Self.database()
        scene.peripheral.engine.setDatabase(database)
        let register = scene.perform(.registerServer(
            spsm: .eatt, parameters: CreditBasedChannelParameters(mtu: 247, mps: 247, initialCredits: 10), security: .none), on: 1)
        #expect(scene.peripheral.result(register) == .success(.done))
        let handle = try scene.connect(LEConnectionParameters(connectionIntervalMin: 24, connectionIntervalMax: 24))
        // A client discovers before it reads (the peer's state machine refuses reads before a discovery).
        try scene.discover(handle)
        let open = scene.perform(.openEnhancedChannels(
            connection: handle, spsm: .eatt, count: 5, parameters: CreditBasedChannelParameters(mtu: 247, mps: 247, initialCredits: 10)), on: 0)
        try scene.run(until: { $0.central.result(open) != nil }, within: .seconds(2))
        guard case .success(.channelsOpened(let bearers))? = scene.central.result(open) else {
            Issue.record("open: \(String(describing: scene.central.result(open)))")
            return
        }
        #expect(bearers.count == 5)

        // Every caller's reads are issued before any answer can come back (nothing moves on the
        // radio until the clock does): 100 operations in flight from 16 callers.
        var requests: [(id: HostRequestID, caller: Int)] = []
        for read in 0..<Self.reads {
            let caller = read % Self.callers
            requests.append((scene.perform(.gattOnAnyEATTBearer(connection: handle, .read(handle: handles[caller])), on: 0), caller))
        }
        #expect(requests.allSatisfy { scene.central.result($0.id) == nil })
        try scene.run(until: { scene in requests.allSatisfy { scene.central.result($0.id) != nil } }, within: .seconds(10))
        for (id, caller) in requests {
            #expect(scene.central.result(id) == .success(.value(Self.value(caller))), "caller \(caller)")
        }

        // The capture: written, read back, then the ATT PDUs on each bearer in order.
        let bytes = scene.btsnoop(station: 0)
        let (records, error) = CaptureReader.readAll(bytes)
        #expect(error == nil)
        #expect(records.count == scene.packets.filter { $0.station == 0 }.count)
        let pairing = BearerPairing.check(records, bearers: bearers.map { (local: $0.cid, remote: $0.remoteCID) })
        #expect(pairing.violations.isEmpty, "\(pairing.violations)")
        #expect(pairing.requests == Self.reads && pairing.responses == Self.reads)
        // Spread: every bearer carried requests, and at some moment all five had one outstanding.
        #expect(pairing.requestsPerBearer.count == 5 && pairing.requestsPerBearer.values.allSatisfy { $0 > 0 },
                "\(pairing.requestsPerBearer)")
        #expect(pairing.mostOutstanding == 5)
        // The peer's side of the same session: each request answered on the bearer it came on.
        let peer = CaptureReader.readAll(scene.btsnoop(station: 1)).records
        let served = BearerPairing.check(peer, bearers: bearers.map { (local: $0.remoteCID, remote: $0.cid) }, asServer: true)
        #expect(served.violations.isEmpty && served.requests == Self.reads && served.responses == Self.reads)
    }

    @Test("EATT support bits: Server Supported Features declares EATT, the client's Client Supported Features write sets its EATT bit, per client, never cleared")
    func supportedFeatures() throws {
        var scene = try EnginesOnVirtualLink(timing: .radio())
        var builder = GATTDatabaseBuilder()
        let features = try builder.addGenericAttributeService(serverFeatures: .eatt)
        scene.peripheral.engine.setDatabase(builder.build())
        scene.perform(.registerServer(spsm: .eatt, parameters: CreditBasedChannelParameters(), security: .none), on: 1)
        let handle = try scene.connect()
        #expect(scene.peripheral.engine.clientSupportedFeatures(connection: handle).isEmpty)
        // Handles known from the test's database: no discovery, so the engine writes no features of its
        // own (it does after a discovery that finds them) and this test's writes are the only ones.
        scene.perform(.gatt(connection: handle, .cachedDiscovery), on: 0)

        // Core Vol 3 Part G §7.4: bit 0 of Server Supported Features is EATT; §7.2: bit 1 of Client Supported Features.
        let readServer = scene.perform(.gatt(connection: handle, .read(handle: features.serverSupportedFeatures)), on: 0)
        let readClientBefore = scene.perform(.gatt(connection: handle, .read(handle: features.clientSupportedFeatures)), on: 0)
        let write = scene.perform(.gatt(connection: handle, .write(
            handle: features.clientSupportedFeatures, value: [GATTClientFeatures.eatt.rawValue])), on: 0)
        let clear = scene.perform(.gatt(connection: handle, .write(handle: features.clientSupportedFeatures, value: [0x00])), on: 0)
        try scene.run(until: { $0.central.result(clear) != nil }, within: .seconds(2))
        #expect(scene.central.result(readServer) == .success(.value([GATTServerFeatures.eatt.rawValue])))
        #expect(scene.central.result(readClientBefore) == .success(.value([0x00])))
        #expect(scene.central.result(write) == .success(.done))
        #expect(scene.central.result(clear) == .failure(.gatt(.errorResponse(
            .valueNotAllowed, requestOpcode: .writeRequest, handle: features.clientSupportedFeatures))))
        #expect(scene.peripheral.engine.clientSupportedFeatures(connection: handle) == [0x02])

        // Read back on an EATT bearer of the same client: the value it wrote, not a global one.
        let open = scene.perform(.openEnhancedChannels(
            connection: handle, spsm: .eatt, count: 1, parameters: CreditBasedChannelParameters()), on: 0)
        try scene.run(until: { $0.central.result(open) != nil }, within: .seconds(2))
        guard case .success(.channelsOpened(let bearers))? = scene.central.result(open), let bearer = bearers.first else {
            Issue.record("open: \(String(describing: scene.central.result(open)))")
            return
        }
        let readBack = scene.perform(.gattOnEATT(connection: handle, cid: bearer.cid, .read(handle: features.clientSupportedFeatures)), on: 0)
        try scene.run(until: { $0.central.result(readBack) != nil }, within: .seconds(2))
        #expect(scene.central.result(readBack) == .success(.value([0x02])))
        // The database's own value is untouched: another client starts from 0.
        guard case .cached(let stored)? = scene.peripheral.engine.database.attributes.first(where: { $0.handle == features.clientSupportedFeatures })?.value else {
            Issue.record("no cached Client Supported Features attribute")
            return
        }
        #expect(stored == [0])
    }

    @Test("with no EATT bearer open, gattOnAnyEATTBearer fails at once")
    func noBearer() throws {
        var scene = try EnginesOnVirtualLink(timing: .immediate)
        let handle = try scene.connect()
        let read = scene.perform(.gattOnAnyEATTBearer(connection: handle, .read(handle: 1)), on: 0)
        #expect(scene.central.result(read) == .failure(.noEATTBearer(connection: handle)))
    }

    @Test("the capture check catches a second request on a bearer before its response")
    func checkerCatchesOverlap() {
        // Two Read Requests on CID 0x0041 (K-frames: SDU length, then the ATT PDU), then one response on 0x0040.
        func frame(_ cid: UInt16, _ att: [UInt8]) -> HCIPacket {
            let sdu = [UInt8(att.count), 0] + att
            let l2cap = [UInt8(sdu.count), 0, UInt8(cid & 0xFF), UInt8(cid >> 8)] + sdu
            return HCIPacket(type: .acl, payload: [0x40, 0x00, UInt8(l2cap.count), 0] + l2cap)
        }
        let writer = BTSnoopWriter()
        var bytes = writer.fileHeader
        for (packet, direction) in [
            (frame(0x0041, [0x0A, 0x03, 0x00]), PacketDirection.hostToController),
            (frame(0x0041, [0x0A, 0x05, 0x00]), .hostToController),
            (frame(0x0040, [0x0B, 0x01]), .controllerToHost),
        ] {
            writer.appendRecord(packet, direction: direction, timestamp: 0, to: &bytes)
        }
        let pairing = BearerPairing.check(CaptureReader.readAll(bytes).records, bearers: [(local: 0x0040, remote: 0x0041)])
        #expect(pairing.violations.count == 1)
        #expect(pairing.requests == 2 && pairing.responses == 1)
    }
}

/// Request/response pairing per EATT bearer in a capture (Core Vol 3 Part F §3.3.2: one request
/// outstanding per bearer): ACL packets reassembled into L2CAP PDUs per direction, K-frames on the
/// bearers' CIDs read as one ATT PDU per SDU (Part F §3.2.11; SDUs here fit one K-frame).
struct BearerPairing {
    var requests = 0
    var responses = 0
    var requestsPerBearer: [UInt16: Int] = [:]
    var violations: [String] = []
    var mostOutstanding = 0

    /// ATT requests (a response is due, §3.3): the request opcodes of Part F §3.4.
    static let requestOpcodes: Set<UInt8> = [0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20]
    static let responseOpcodes: Set<UInt8> = [0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x21]

    /// `bearers`: our CID (what we receive on) and the peer's (what we send to). As a client,
    /// requests go out and responses come in; `asServer` the other way round.
    static func check(_ records: [CaptureRecord], bearers: [(local: UInt16, remote: UInt16)], asServer: Bool = false) -> BearerPairing {
        var result = BearerPairing()
        var reassemblers = [L2CAPReassembler(), L2CAPReassembler()]
        var outstanding: [UInt16: UInt8] = [:]
        for record in records {
            guard let packet = record.packet, packet.type == .acl, let acl = try? ACLPacket(decoding: packet.payload) else { continue }
            let outgoing = record.direction == .hostToController
            guard let pdu = reassemblers[outgoing ? 0 : 1].receive(acl).pdu, pdu.payload.count >= 3 else { continue }
            let cid = pdu.channelID.rawValue
            guard let bearer = bearers.firstIndex(where: { (outgoing ? $0.remote : $0.local) == cid }) else { continue }
            let key = bearers[bearer].local
            let opcode = pdu.payload[pdu.payload.startIndex + 2]
            let isRequest = requestOpcodes.contains(opcode) && (outgoing != asServer)
            let isResponse = responseOpcodes.contains(opcode) && (outgoing == asServer)
            if isRequest {
                result.requests += 1
                result.requestsPerBearer[key, default: 0] += 1
                if let pending = outstanding[key] {
                    result.violations.append("record \(record.index): request 0x\(String(opcode, radix: 16)) on bearer 0x\(String(key, radix: 16)) while 0x\(String(pending, radix: 16)) awaits its response")
                }
                outstanding[key] = opcode
                result.mostOutstanding = max(result.mostOutstanding, outstanding.count)
            } else if isResponse {
                result.responses += 1
                if outstanding.removeValue(forKey: key) == nil {
                    result.violations.append("record \(record.index): response 0x\(String(opcode, radix: 16)) on bearer 0x\(String(key, radix: 16)) with no request")
                }
            }
        }
        return result
    }
}
