import BluewireAnalysis
import BluewireCore
import BluewireGATT
import BluewireSnoop
import Testing

/// The GATT table and per-attribute activity of the horizon treadmill capture, and the export of every
/// discovered database. Expected values were read off tshark 4.0's dissection of the same file
/// (`tshark -V -Y 'btatt.opcode==0x11 || btatt.opcode==0x09 || btatt.opcode==0x05'`, and per-handle
/// counts of `btatt.opcode==0x1b` / `0x12`), not from this analyzer.
@Suite("Analyzed GATT tables and database export")
struct AnalyzeGATTTableTests {
    static let horizon: CaptureAnalysis = CaptureAnalyzer.analyze(
        CaptureReader.readAll(AnalysisFixtures.bytes("horizon_treadmill_notify.btsnoop_hci.log")).records)

    /// (start, end, UUID) of each primary service from the Read By Group Type responses (frames 568, 574).
    static let services: [(UInt16, UInt16, UInt16)] = [
        (0x0001, 0x0001, 0x1801), (0x0002, 0x0008, 0x1800), (0x0009, 0x0019, 0xFFF0),
        (0x001A, 0x0050, 0x1826), (0x0051, 0x005C, 0xFEE7),
    ]

    /// (declaration, value handle, properties, UUID) from the Read By Type (0x2803) responses.
    static let characteristics: [(UInt16, UInt16, UInt8, UInt16)] = [
        (0x0003, 0x0004, 0x02, 0x2A00), (0x0005, 0x0006, 0x02, 0x2A01), (0x0007, 0x0008, 0x02, 0x2A04),
        (0x000A, 0x000B, 0x0A, 0xFFF1), (0x000D, 0x000E, 0x02, 0xFFF2), (0x0010, 0x0011, 0x08, 0xFFF3),
        (0x0013, 0x0014, 0x10, 0xFFF4), (0x0017, 0x0018, 0x02, 0xFFF5), (0x001B, 0x001C, 0x02, 0x2ACC),
        (0x001E, 0x001F, 0x10, 0x2AD2), (0x0022, 0x0023, 0x10, 0x2ACD), (0x0026, 0x0027, 0x10, 0x2ACF),
        (0x002A, 0x002B, 0x10, 0x2ACE), (0x002E, 0x002F, 0x28, 0x2AD9), (0x0032, 0x0033, 0x02, 0x2AD4),
        (0x0035, 0x0036, 0x02, 0x2AD5), (0x0038, 0x0039, 0x02, 0x2AD6), (0x003B, 0x003C, 0x02, 0x2AD8),
        (0x003E, 0x003F, 0x02, 0x2AD7), (0x0041, 0x0042, 0x10, 0x2ADA), (0x0045, 0x0046, 0x12, 0x2AD3),
        (0x0049, 0x004A, 0x10, 0x2AD1), (0x004D, 0x004E, 0x10, 0x2AD0), (0x0052, 0x0053, 0x12, 0xFEA1),
        (0x0056, 0x0057, 0x2A, 0xFEA2), (0x005A, 0x005B, 0x02, 0xFEC9),
    ]

    /// Client Characteristic Configuration descriptors the Find Information responses named.
    static let configurationHandles: [UInt16] = [
        0x0015, 0x0020, 0x0024, 0x0028, 0x002C, 0x0030, 0x0043, 0x0047, 0x004B, 0x004F, 0x0054, 0x0058,
    ]

    @Test("the treadmill connection: peer, role and every parameter change")
    func treadmillConnection() throws {
        let connections = Self.horizon.establishedConnections
        try #require(connections.count == 1)
        let connection = connections[0]
        #expect(connection.handle == 0x0200)
        #expect(connection.peerAddress == BluetoothAddress(parsing: "FA:E4:E3:24:20:09/random"))
        #expect(connection.localRole == .central)
        #expect(connection.parameterHistory.map(\.interval) == [24, 6, 24])
        #expect(connection.parameters?.supervisionTimeout == 500)
        #expect(connection.attMTU == 23, "no Exchange MTU in the capture: the default applies")
        #expect(connection.durationMicroseconds > 0)
        #expect((connection.receivedATTBitsPerSecond ?? 0) > 0)
    }

    @Test("services of the treadmill as its Read By Group Type responses listed them")
    func treadmillServices() throws {
        let table = try #require(Self.horizon.establishedConnections.first).peerServer.table
        let actual = table.services.values.sorted { $0.handle < $1.handle }
            .map { "\(hex($0.handle, width: 4))-\(hex($0.endHandle, width: 4)) \($0.uuid.shortString) \($0.isPrimary)" }
        let expected = Self.services.map { "\(hex($0.0, width: 4))-\(hex($0.1, width: 4)) \(BluetoothUUID($0.2).shortString) true" }
        #expect(actual == expected)
    }

    @Test("characteristics of the treadmill with properties and value handles, in their services")
    func treadmillCharacteristics() throws {
        let connection = try #require(Self.horizon.establishedConnections.first)
        let tree = DiscoveredGATTTree(connection.peerServer.table)
        #expect(tree.orphanCharacteristics.isEmpty)
        let actual = tree.services.flatMap { $0.characteristics }.map {
            "\(hex($0.declaration.declarationHandle, width: 4)) \(hex($0.declaration.valueHandle, width: 4)) "
                + "\(hex($0.declaration.properties.rawValue, width: 2)) \($0.declaration.uuid.shortString)"
        }
        let expected = Self.characteristics.map {
            "\(hex($0.0, width: 4)) \(hex($0.1, width: 4)) \(hex($0.2, width: 2)) \(BluetoothUUID($0.3).shortString)"
        }
        #expect(actual == expected)
        #expect(tree.services.map { $0.characteristics.count } == [0, 3, 5, 15, 3])
        let configurations = tree.services.flatMap { $0.characteristics }.flatMap { $0.descriptors }
            .filter { $0.uuid == .clientCharacteristicConfiguration }.map(\.handle)
        #expect(configurations == Self.configurationHandles)
    }

    @Test("per-attribute notifications and writes of the treadmill equal tshark's per-handle counts")
    func treadmillActivity() throws {
        let server = try #require(Self.horizon.establishedConnections.first).peerServer
        #expect(server.activity(of: 0x0012).notifications == 261)
        #expect(server.activity(of: 0x0014).notifications == 786)
        #expect(server.activity(of: 0x0014).lastNotifiedValue == parseHex("140000000000000000011200000000"))
        #expect(server.activity(of: 0x0011).writeRequests == 260)
        #expect(server.activity(of: 0x0011).lastWrittenValue == parseHex("55aa250001000200b8d21400"))
        #expect(server.activity(of: 0x0015).writeRequests == 1)
        let notifications = server.activity.values.reduce(0) { $0 + $1.notifications }
        #expect(notifications == 1047)
        #expect(server.activity.values.reduce(0) { $0 + $1.writes } == 261)
    }

    @Test("every discovered database exports as JSON the database loader reads back handle for handle",
          arguments: AnalysisFixtures.names)
    func exportRoundTrips(name: String) throws {
        let analysis = CaptureAnalyzer.analyze(CaptureReader.readAll(AnalysisFixtures.bytes(name)).records)
        let discovered = analysis.devices.filter { !$0.table.isEmpty }
        let hist = AnalysisFixtures.tshark[name]?["att_opcode_hist"] as? [String: Int] ?? [:]
        // A capture with Read By Group Type responses has at least one device whose services were discovered.
        #expect(discovered.isEmpty == (hist["0x11"] == nil), "\(name): devices with a discovered table")
        for device in discovered {
            let database = try device.database()
            let loaded = try GATTDatabase(json: database.exportJSON())
            #expect(loaded.attributes.count == database.attributes.count, "\(name) \(device.name)")
            for (original, reloaded) in zip(database.attributes, loaded.attributes) {
                #expect(original.handle == reloaded.handle, "\(name) \(device.name)")
                #expect(original.type == reloaded.type, "\(name) handle \(original.handle)")
                #expect(original.cachedValue == reloaded.cachedValue, "\(name) handle \(original.handle)")
                #expect(original.permissions == reloaded.permissions, "\(name) handle \(original.handle)")
            }
            #expect(loaded.characteristics == database.characteristics, "\(name) \(device.name)")
        }
    }

    @Test("the treadmill export holds each declaration the capture discovered, with perms from properties")
    func treadmillExport() throws {
        let device = try #require(Self.horizon.devices.first { $0.address != nil })
        #expect(device.databaseFileName == "FA-E4-E3-24-20-09-random.json")
        let database = try device.database()
        let services = database.attributes.filter { $0.type == .primaryService }
        #expect(services.map(\.handle) == Self.services.map(\.0))
        #expect(services.map(\.cachedValue) == Self.services.map { BluetoothUUID($0.2).attBytes })
        #expect(database.characteristics.map(\.valueHandle) == Self.characteristics.map(\.1))
        // 0x000B: Read | Write; 0x0011: Write; 0x0014: Notify only.
        #expect(database[handle: 0x000B]?.permissions == [.read, .write])
        #expect(database[handle: 0x0011]?.permissions == [.write])
        #expect(database[handle: 0x0014]?.permissions == [])
        #expect(database[handle: 0x0015]?.type == .clientCharacteristicConfiguration)
        #expect(database[handle: 0x0015]?.cachedValue == [0, 0])
    }
}
