import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import BluewireTesting
import Testing

/// The engine choosing the multiple-value ATT PDUs by itself, between two engines on the virtual link
/// with radio timing: its client declares what it supports in the peer's Client Supported Features
/// after discovery (Core Vol 3 Part G §7.2), its server packs notifications into Multiple Handle Value
/// Notifications only for a client that declared them (§4.10.2), and `.readMultiple` uses Read Multiple
/// Variable Length (§4.8.5), finishing a value the answer cut at ATT_MTU with Read Blob. What went on
/// the wire is read from the ACL packets each engine sent.
@Suite("Host engine: Client Supported Features, Multiple Handle Value Notifications, Read Multiple Variable Length")
struct EngineMultipleValuesTests {
    /// Three values of different lengths; the middle one longer than one ATT_MTU of 247.
    static let values: [[UInt8]] = [Array(0..<10), (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }, [0xA0, 0xA1, 0xA2, 0xA3, 0xA4]]

    struct Scene {
        var link: EnginesOnVirtualLink
        var central: UInt16
        var peripheral: UInt16
        var services: [DiscoveredService]
        var valueHandles: [UInt16]
        var clientFeaturesHandle: UInt16
    }

    /// The GATT service with both feature characteristics, and a service of three readable,
    /// notifiable characteristics; connected and discovered by the central.
    static func scene(clientFeatures: GATTClientFeatures = HostEngineConfiguration.supportedClientFeatures) throws -> Scene {
        var link = try EnginesOnVirtualLink(timing: .radio(), recordsPackets: true, engine: { station, configuration in
            if station == 0 { configuration.clientFeatures = clientFeatures }
        })
        var builder = GATTDatabaseBuilder()
        let features = try builder.addGenericAttributeService(serverFeatures: .eatt)
        try builder.addService(BluetoothUUID(0xFE00))
        var handles: [UInt16] = []
        for (index, value) in values.enumerated() {
            let added = try builder.addCharacteristic(
                BluetoothUUID(UInt16(0xFE01 + index)), properties: [.read, .notify], permissions: [.read], value: .cached(value))
            handles.append(added.valueHandle)
        }
        link.peripheral.engine.setDatabase(builder.build())
        let central = try link.connect(LEConnectionParameters(connectionIntervalMin: 24, connectionIntervalMax: 24))
        let peripheral = try #require(link.peripheral.engine.connectionHandles.first)
        let mtu = link.perform(.gatt(connection: central, .exchangeMTU), on: 0)
        let discover = link.perform(.gatt(connection: central, .discoverAll), on: 0)
        try link.run(until: { $0.central.result(discover) != nil && $0.central.result(mtu) != nil }, within: .seconds(2))
        guard case .success(.services(let services))? = link.central.result(discover) else {
            Issue.record("discovery: \(String(describing: link.central.result(discover)))")
            throw EngineLinkError.connectionFailed
        }
        // The engine's own write (if any) follows the discovery: let it finish.
        link.run(for: .milliseconds(200))
        return Scene(link: link, central: central, peripheral: peripheral, services: services, valueHandles: handles,
                     clientFeaturesHandle: features.clientSupportedFeatures)
    }

    /// ATT PDUs (opcode first) a station sent on the fixed ATT channel, from its recorded ACL packets.
    static func attSent(by station: Int, in link: EnginesOnVirtualLink) -> [[UInt8]] {
        link.packets.compactMap { record -> [UInt8]? in
            guard record.station == station, record.direction == .hostToController, record.packet.type == .acl else { return nil }
            let bytes = Array(record.packet.payload)
            // ACL header (4), then a whole L2CAP B-frame header (4) on CID 0x0004.
            guard bytes.count > 8, bytes[1] & 0x30 != 0x10, bytes[6] == 0x04, bytes[7] == 0x00 else { return nil }
            return Array(bytes[8...])
        }
    }

    static func subscribeAll(_ scene: inout Scene) throws {
        let characteristics = scene.services.flatMap(\.characteristics).map(\.characteristic)
            .filter { scene.valueHandles.contains($0.valueHandle) }
        #expect(characteristics.count == 3)
        let ids = characteristics.map {
            scene.link.perform(.gatt(connection: scene.central, .subscribe($0, indications: false, descriptorHandle: nil)), on: 0)
        }
        try scene.link.run(until: { link in ids.allSatisfy { link.central.result($0) != nil } }, within: .seconds(2))
        for id in ids { #expect(scene.link.central.result(id).map { (try? $0.get()) != nil } == true) }
    }

    @Test("after discovery the client writes its features (EATT, multiple notifications) to the server's 0x2B29, once")
    func clientFeaturesWrittenAfterDiscovery() throws {
        var scene = try Self.scene()
        #expect(scene.link.peripheral.engine.clientSupportedFeatures(connection: scene.peripheral) == [0x06])
        let writes = Self.attSent(by: 0, in: scene.link).filter { $0.first == ATTOpcode.writeRequest.rawValue }
        #expect(writes == [[0x12, UInt8(scene.clientFeaturesHandle & 0xFF), UInt8(scene.clientFeaturesHandle >> 8), 0x06]])
        // A second discovery does not write again.
        let again = scene.link.perform(.gatt(connection: scene.central, .discoverAll), on: 0)
        try scene.link.run(until: { $0.central.result(again) != nil }, within: .seconds(2))
        scene.link.run(for: .milliseconds(200))
        #expect(Self.attSent(by: 0, in: scene.link).filter { $0.first == ATTOpcode.writeRequest.rawValue }.count == 1)
    }

    @Test("a client that declared them gets one Multiple Handle Value Notification for three values")
    func multipleNotificationsToADeclaringClient() throws {
        var scene = try Self.scene()
        try Self.subscribeAll(&scene)
        let short = [GATTHandleValue(handle: scene.valueHandles[0], value: [1, 2, 3]),
                     GATTHandleValue(handle: scene.valueHandles[1], value: [4, 5]),
                     GATTHandleValue(handle: scene.valueHandles[2], value: [6])]
        let before = Self.attSent(by: 1, in: scene.link).count
        let notify = scene.link.perform(.notifyMultiple(short, connection: scene.peripheral), on: 1)
        #expect(scene.link.peripheral.result(notify) == .success(.notified([scene.peripheral])))
        scene.link.run(for: .milliseconds(200))
        let sent = Self.attSent(by: 1, in: scene.link).dropFirst(before).map { $0[0] }
        #expect(sent == [ATTOpcode.multipleHandleValueNotification.rawValue])
        let received = scene.link.central.events.compactMap { event -> GATTHandleValue? in
            guard case .notification(_, let attribute, let value, false) = event else { return nil }
            return GATTHandleValue(handle: attribute, value: Array(value))
        }
        #expect(received == short)
    }

    @Test("a client that did not declare them gets one Handle Value Notification per value")
    func singleNotificationsOtherwise() throws {
        var scene = try Self.scene(clientFeatures: [])
        #expect(Self.attSent(by: 0, in: scene.link).allSatisfy { $0.first != ATTOpcode.writeRequest.rawValue })
        #expect(scene.link.peripheral.engine.clientSupportedFeatures(connection: scene.peripheral).allSatisfy { $0 == 0 })
        try Self.subscribeAll(&scene)
        let short = scene.valueHandles.map { GATTHandleValue(handle: $0, value: [UInt8(truncatingIfNeeded: $0)]) }
        let before = Self.attSent(by: 1, in: scene.link).count
        scene.link.perform(.notifyMultiple(short, connection: scene.peripheral), on: 1)
        scene.link.run(for: .milliseconds(200))
        let sent = Self.attSent(by: 1, in: scene.link).dropFirst(before).map { $0[0] }
        #expect(sent == Array(repeating: ATTOpcode.handleValueNotification.rawValue, count: 3))
        let received = scene.link.central.events.compactMap { event -> UInt16? in
            guard case .notification(_, let attribute, _, false) = event else { return nil }
            return attribute
        }
        #expect(received == scene.valueHandles)
    }

    @Test("readMultiple: one Read Multiple Variable Length, the cut value finished with Read Blob, the rest read on its own")
    func readMultipleVariableLength() throws {
        var scene = try Self.scene()
        let before = Self.attSent(by: 0, in: scene.link).count
        let read = scene.link.perform(.gatt(connection: scene.central, .readMultiple(handles: scene.valueHandles)), on: 0)
        try scene.link.run(until: { $0.central.result(read) != nil }, within: .seconds(2))
        #expect(scene.link.central.result(read) == .success(.values(Self.values)))
        let sent = Self.attSent(by: 0, in: scene.link).dropFirst(before).map { $0[0] }
        // 10 + 2 + 2 + 232 octets fill the 246 of the answer: the 300-octet value needs one blob from
        // offset 232, and the third value, not in the answer at all, a Read of its own.
        #expect(sent == [ATTOpcode.readMultipleVariableRequest.rawValue, ATTOpcode.readBlobRequest.rawValue,
                         ATTOpcode.readRequest.rawValue])
    }
}

/// `ReadMultipleValues` against scripted answers, for what no peer here does on demand: a server
/// without Read Multiple Variable Length (bumble's and Bluewire's servers both have it).
@Suite("ReadMultipleValues: fallback and errors")
struct ReadMultipleValuesTests {
    @Test("Request Not Supported: each value read on its own, long ones with Read Blob")
    func fallbackToSingleReads() throws {
        var read = ReadMultipleValues(handles: [3, 5], mtu: 23)
        #expect(try read.start() == .request(.readMultipleVariableRequest(ATTHandleList([3, 5]))))
        var step = try read.receive(.errorResponse(requestOpcode: .readMultipleVariableRequest, handle: 3, error: .requestNotSupported))
        #expect(step == .request(.readRequest(handle: 3)))
        #expect(read.variableLengthRefused)
        step = try read.receive(.readResponse(value: Array(repeating: 1, count: 22)[...]))
        #expect(step == .request(.readBlobRequest(handle: 3, offset: 22)))
        step = try read.receive(.readBlobResponse(value: [2, 2][...]))
        #expect(step == .request(.readRequest(handle: 5)))
        step = try read.receive(.readResponse(value: [9][...]))
        #expect(step == .finished([Array(repeating: 1, count: 22) + [2, 2], [9]]))
    }

    @Test("a server known not to have it is not asked; one handle is read on its own")
    func noVariableLengthRequest() throws {
        var known = ReadMultipleValues(handles: [3, 5], mtu: 23, useVariableLength: false)
        #expect(try known.start() == .request(.readRequest(handle: 3)))
        var one = ReadMultipleValues(handles: [7], mtu: 23)
        #expect(try one.start() == .request(.readRequest(handle: 7)))
        #expect(try one.receive(.readResponse(value: [1][...])) == .finished([[1]]))
    }

    @Test("another Error Response ends it with that error; no handles or handle 0 is refused")
    func errors() throws {
        var read = ReadMultipleValues(handles: [3, 5], mtu: 23)
        _ = try read.start()
        #expect(throws: GATTClientError.errorResponse(.insufficientEncryption, requestOpcode: .readMultipleVariableRequest, handle: 5)) {
            try read.receive(.errorResponse(requestOpcode: .readMultipleVariableRequest, handle: 5, error: .insufficientEncryption))
        }
        var empty = ReadMultipleValues(handles: [], mtu: 23)
        #expect(throws: GATTClientError.self) { try empty.start() }
        var zero = ReadMultipleValues(handles: [0, 1], mtu: 23)
        #expect(throws: GATTClientError.self) { try zero.start() }
    }
}
