import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import HostTestSupport
import Testing

/// The GATT client requests beyond `.discoverAll` and the reads and writes by handle
/// (HostEngine+ClientExtras): each one request whose ATT requests the engine sends itself, answered
/// byte for byte by BluewireGATT's `GATTServer` serving `TestDatabase`, and each moving the peer's
/// connection state machine as its phase says (DiscoverServices, DiscoverCharacteristics, Read, Write).
@Suite("Host engine: step-by-step discovery, reads by UUID, strict Read Multiple, reliable writes")
struct CentralEngineClientExtrasTests {
    static let peripheral = BluetoothAddress(value: 0xC0_AA_BB_CC_DD_E1, type: .random)
    static let link: UInt16 = 0x0001

    /// A link as central to the server; nothing discovered, ATT_MTU 23.
    static func connected() throws -> (EngineDriver, GATTServer) {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        var peer = GATTServer(database: try TestDatabase.make())
        peer.connect(link)
        driver.perform(.connect(peripheral, LEConnectionParameters()))
        driver.answerCommands()
        driver.controller(ControllerBytes.leConnectionComplete(handle: link, central: true, peer: peripheral))
        driver.answerCommands()
        _ = driver.takeEvents()
        return (driver, peer)
    }

    /// Answers the engine's ATT requests until it sends none, checking one is outstanding at a time;
    /// the PDUs it sent.
    static func exchange(_ driver: inout EngineDriver, _ peer: inout GATTServer) -> [[UInt8]] {
        var sent: [[UInt8]] = []
        while true {
            let pdus = driver.takeATT()
            guard !pdus.isEmpty else { break }
            #expect(pdus.count == 1, "one request outstanding at a time (Core Vol 3 Part F §3.3.2)")
            for pdu in pdus {
                sent.append(pdu)
                if let answer = peer.handle(pdu, from: link) { driver.controller(ControllerBytes.att(handle: link, answer)) }
            }
        }
        return sent
    }

    static func request(_ driver: inout EngineDriver, _ peer: inout GATTServer, _ request: GATTClientRequest) -> (Result<HostCompletion, HostEngineError>?, [UInt8]) {
        let id = driver.perform(.gatt(connection: link, request))
        let opcodes = exchange(&driver, &peer).map { $0.first ?? 0 }
        return (driver.result(id), opcodes)
    }

    @Test("by UUID: Find By Type Value; the machine goes DiscoveringServices then Idle, where Read is refused with nothing sent")
    func primaryServiceByUUID() throws {
        var (driver, peer) = try Self.connected()
        let (result, opcodes) = Self.request(&driver, &peer, .discoverPrimaryServices(uuid: TestDatabase.service))
        #expect(opcodes == [0x06, 0x06], "Find By Type Value Requests until Attribute Not Found")
        #expect(result == .success(.primaryServices([GATTService(handle: 1, endHandle: 6, uuid: TestDatabase.service)])))
        let states = driver.takeEvents().compactMap { event -> ConnectionState? in
            if case .stateChanged(_, let transition, _) = event { transition.to } else { nil }
        }
        #expect(states == [.connected(.discoveringServices), .connected(.idle)])
        let (read, sent) = Self.request(&driver, &peer, .readUsingCharacteristicUUID(BluetoothUUID(0xFFF1), startingHandle: 1, endingHandle: 0xFFFF))
        #expect(sent.isEmpty)
        #expect(read == .failure(.refused(state: .connected(.idle), trigger: .read)))
    }

    @Test("characteristics, descriptors and the (absent) includes of a service: DiscoverCharacteristics; reads by UUID then accepted")
    func insideAService() throws {
        var (driver, peer) = try Self.connected()
        let service = GATTService(handle: 1, endHandle: 6, uuid: TestDatabase.service)
        let (includes, includeOpcodes) = Self.request(&driver, &peer, .findIncludedServices(service))
        #expect(includeOpcodes == [0x08], "Read By Type (Include), answered Attribute Not Found")
        #expect(includes == .success(.includedServices([])))
        #expect(driver.engine.state(of: Self.peripheral) == .connected(.discoveredCharacteristic))

        let (found, characteristicOpcodes) = Self.request(&driver, &peer, .discoverCharacteristics(service, uuid: BluetoothUUID(0xFFF2)))
        #expect(characteristicOpcodes.allSatisfy { $0 == 0x08 })
        guard case .success(.characteristics(let characteristics)) = found else { Issue.record("\(String(describing: found))"); return }
        #expect(characteristics.map(\.valueHandle) == [TestDatabase.longHandle])

        let first = GATTCharacteristic(handle: 2, valueHandle: TestDatabase.valueHandle, properties: [.read, .write, .notify, .indicate], uuid: BluetoothUUID(0xFFF1), endHandle: 4)
        let (descriptors, descriptorOpcodes) = Self.request(&driver, &peer, .discoverDescriptors(first))
        #expect(descriptorOpcodes == [0x04], "one Find Information Request covers 4...4")
        #expect(descriptors == .success(.descriptors([GATTDescriptor(handle: TestDatabase.cccdHandle, uuid: .clientCharacteristicConfiguration)])))

        let (values, readOpcodes) = Self.request(&driver, &peer, .readUsingCharacteristicUUID(BluetoothUUID(0xFFF1), startingHandle: 1, endingHandle: 0xFFFF))
        #expect(readOpcodes.first == 0x08)
        #expect(values == .success(.handleValues([GATTHandleValue(handle: TestDatabase.valueHandle, value: [0x2A])])))
        #expect(driver.engine.state(of: Self.peripheral) == .connected(.discoveredCharacteristic))
    }

    @Test("strict Read Multiple Variable Length and Read Multiple: one PDU each, the server's answer as it is")
    func readMultipleStrict() throws {
        var (driver, peer) = try Self.connected()
        driver.perform(.gatt(connection: Self.link, .cachedDiscovery))
        let (variable, variableOpcodes) = Self.request(&driver, &peer, .readMultipleVariableLength(handles: [TestDatabase.valueHandle, TestDatabase.longHandle]))
        #expect(variableOpcodes == [0x20])
        // The server cuts the answer at ATT_MTU (Core Vol 3 Part F §3.4.4.12): 1 + (2 + 1) + (2 + 17) = 23
        // octets; the strict procedure hands the cut value on as it came (`.readMultiple` would read on).
        #expect(variable == .success(.values([[0x2A], Array(TestDatabase.longValue.prefix(17))])))
        let (joined, joinedOpcodes) = Self.request(&driver, &peer, .readMultipleConcatenated(handles: [TestDatabase.valueHandle, TestDatabase.valueHandle]))
        #expect(joinedOpcodes == [0x0E])
        #expect(joined == .success(.value([0x2A, 0x2A])))
    }

    @Test("reliable writes: every part prepared and echoed, one Execute Write; a refused part cancels the queue and nothing is written")
    func reliableWrites() throws {
        var (driver, peer) = try Self.connected()
        driver.perform(.gatt(connection: Self.link, .cachedDiscovery))
        let writes = [GATTHandleValue(handle: TestDatabase.valueHandle, value: Array(repeating: 5, count: 20))]
        let (written, opcodes) = Self.request(&driver, &peer, .reliableWrite(writes))
        #expect(opcodes == [0x16, 0x16, 0x18], "18 + 2 octets prepared, then executed")
        #expect(written == .success(.done))
        #expect(Self.request(&driver, &peer, .readLong(handle: TestDatabase.valueHandle)).0 == .success(.value(Array(repeating: 5, count: 20))))

        let refused = [GATTHandleValue(handle: TestDatabase.valueHandle, value: [9]), GATTHandleValue(handle: TestDatabase.longHandle, value: [9])]
        let id = driver.perform(.gatt(connection: Self.link, .reliableWrite(refused)))
        let sent = Self.exchange(&driver, &peer)
        #expect(sent.map { $0.first } == [0x16, 0x16, 0x18])
        #expect(sent.last == [0x18, 0x00], "Execute Write Request, cancel all prepared writes")
        #expect(driver.result(id) == .failure(.gatt(.errorResponse(.writeNotPermitted, requestOpcode: .prepareWriteRequest, handle: TestDatabase.longHandle))))
        #expect(Self.request(&driver, &peer, .read(handle: TestDatabase.valueHandle)).0 == .success(.value(Array(repeating: 5, count: 20))))

        let (offset, offsetOpcodes) = Self.request(&driver, &peer, .writeLongAtOffset(handle: TestDatabase.valueHandle, value: [7, 7], offset: 19))
        #expect(offsetOpcodes == [0x16, 0x18])
        #expect(offset == .success(.done))
        #expect(Self.request(&driver, &peer, .readLong(handle: TestDatabase.valueHandle)).0 == .success(.value(Array(repeating: 5, count: 19) + [7, 7])))
    }
}
