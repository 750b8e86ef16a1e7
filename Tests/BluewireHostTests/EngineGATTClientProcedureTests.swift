import Bluewire
import BluewireTesting
import Testing

/// `EngineGATTClient`'s procedures beyond `discoverAll`, the reads and the writes by handle (Core Vol 3
/// Part G §4.4.2–§4.9.5), between two `EngineHost`s on the virtual link: each is ONE engine request
/// (`EngineHost.requestsPerformed`), however many ATT requests it takes, and each result is checked
/// against the peripheral's database (read back through the server where it writes).
@Suite("EngineGATTClient procedures: one engine request each", .timeLimit(.minutes(1)))
struct EngineGATTClientProcedureTests {
    static let centralAddress = BluetoothAddress.randomStatic(0x0A0B_0C0D_0E21)
    static let peripheralAddress = BluetoothAddress.randomStatic(0x0A0B_0C0D_0E22)
    static let battery = BluetoothUUID(0xFFA0)
    static let level = BluetoothUUID(0xFFA1)
    static let notes = BluetoothUUID(0xFFA2)
    static let spare = BluetoothUUID(0xFFA3)
    static let device = BluetoothUUID(0xFFB0)
    static let description = BluetoothUUID(0x2901)

    /// Handles the peripheral's builder gave out.
    struct Handles {
        var levelInBattery: UInt16
        var notes: UInt16
        var spare: UInt16
        var levelInDevice: UInt16
        var fixed: UInt16
    }

    struct Scene {
        let central: EngineHost
        let peripheral: EngineHost
        let gatt: EngineGATTClient
        let handles: Handles

        /// Runs `body` and returns its result with the number of engine requests it took.
        func counting<R>(_ body: () async throws -> R) async rethrows -> (R, UInt32) {
            let before = await central.requestsPerformed
            let result = try await body()
            return (result, await central.requestsPerformed &- before)
        }

        func close() async {
            await central.close()
            await peripheral.close()
        }
    }

    /// Battery 0xFFA0: Level 0xFFA1 (read, write), Notes 0xFFA2 (read, write, notify; CCCD and a user
    /// description), Spare 0xFFA3 (read, write). Device 0xFFB0 includes Battery, with its own Level
    /// 0xFFA1 (read) and Fixed 0xFFB1 (read only).
    static func scene() async throws -> Scene {
        let hosts = EngineHostsOnVirtualLink(central: centralAddress, peripheral: peripheralAddress)
        var builder = GATTDatabaseBuilder()
        let battery = try builder.addService(Self.battery)
        let level = try builder.addCharacteristic(Self.level, properties: [.read, .write], permissions: [.read, .write], value: .cached([1, 2, 3]))
        let notes = try builder.addCharacteristic(Self.notes, properties: [.read, .write, .notify], permissions: [.read, .write], value: .cached([4, 5]))
        try builder.addDescriptor(Self.description, permissions: [.read], value: .cached(Array("notes".utf8)))
        let spare = try builder.addCharacteristic(Self.spare, properties: [.read, .write], permissions: [.read, .write], value: .cached([6]))
        try builder.addService(Self.device)
        try builder.addIncludedService(battery)
        let deviceLevel = try builder.addCharacteristic(Self.level, properties: [.read], permissions: [.read], value: .cached([9]))
        let fixed = try builder.addCharacteristic(BluetoothUUID(0xFFB1), properties: [.read], permissions: [.read], value: .cached([0xF0]))
        await hosts.peripheral.setDatabase(builder.build())
        _ = try await hosts.central.perform(.start).get()
        _ = try await hosts.peripheral.perform(.start).get()
        _ = try await hosts.peripheral.perform(.startAdvertising(.named("Procedures"))).get()
        let connection = try await hosts.central.connect(to: peripheralAddress)
        let handles = Handles(
            levelInBattery: level.valueHandle, notes: notes.valueHandle, spare: spare.valueHandle,
            levelInDevice: deviceLevel.valueHandle, fixed: fixed.valueHandle)
        return Scene(central: hosts.central, peripheral: hosts.peripheral, gatt: await connection.gatt, handles: handles)
    }

    @Test("services (all, by UUID), includes, characteristics (all, by UUID), descriptors: one engine request each, as the database has them")
    func discoveryStepByStep() async throws {
        let scene = try await Self.scene()
        let gatt = scene.gatt

        let (all, allRequests) = try await scene.counting { try await gatt.discoverServices() }
        #expect(allRequests == 1)
        #expect(all.map(\.uuid).filter { $0 == Self.battery || $0 == Self.device } == [Self.battery, Self.device], "\(all)")
        let (byUUID, byUUIDRequests) = try await scene.counting { try await gatt.discoverServices(uuid: Self.device) }
        #expect(byUUIDRequests == 1)
        let device = try #require(byUUID.first)
        let battery = try #require(all.first { $0.uuid == Self.battery })
        #expect(byUUID == all.filter { $0.uuid == Self.device }, "by UUID finds the same declaration, handles and all")
        #expect(await scene.central.state(of: Self.peripheralAddress) == .connected(.idle), "service discovery ends in Idle")
        let refusal = GATTError.refused(ConnectionTriggerRefused(state: .connected(.idle), trigger: .read))
        await #expect(throws: refusal, "nothing read before characteristics are known (the machine refuses Read in Idle)") {
            try await gatt.read(handle: scene.handles.fixed)
        }

        let (includes, includeRequests) = try await scene.counting { try await gatt.includedServices(of: device) }
        #expect(includeRequests == 1)
        #expect(includes.map(\.serviceHandle) == [battery.handle] && includes.map(\.endHandle) == [battery.endHandle])
        #expect(includes.map(\.uuid) == [Self.battery])

        let (characteristics, characteristicRequests) = try await scene.counting { try await gatt.discoverCharacteristics(of: battery) }
        #expect(characteristicRequests == 1)
        #expect(characteristics.map(\.uuid) == [Self.level, Self.notes, Self.spare])
        #expect(characteristics.map(\.valueHandle) == [scene.handles.levelInBattery, scene.handles.notes, scene.handles.spare])
        #expect(await scene.central.state(of: Self.peripheralAddress) == .connected(.discoveredCharacteristic))
        let (onlyNotes, byUUIDCharacteristicRequests) = try await scene.counting { try await gatt.discoverCharacteristics(of: battery, uuid: Self.notes) }
        #expect(byUUIDCharacteristicRequests == 1)
        #expect(onlyNotes.map(\.valueHandle) == [scene.handles.notes])
        #expect(gatt.cache.characteristics[battery.handle] == characteristics, "by UUID merged into what the cache knew")

        let notes = try #require(characteristics.first { $0.uuid == Self.notes })
        let (descriptors, descriptorRequests) = try await scene.counting { try await gatt.discoverDescriptors(of: notes) }
        #expect(descriptorRequests == 1)
        #expect(descriptors.map(\.uuid) == [.clientCharacteristicConfiguration, Self.description])
        // What discovery found is what the cache-checked calls take: a read of a discovered characteristic.
        #expect(try await gatt.read(notes) == [4, 5])
        await scene.close()
    }

    @Test("Read Using Characteristic UUID over a range, Read Multiple Variable Length and Read Multiple: one engine request each")
    func readsByUUIDAndMultiple() async throws {
        let scene = try await Self.scene()
        let gatt = scene.gatt
        let handles = scene.handles
        _ = try await gatt.discoverAll()

        let (everywhere, requests) = try await scene.counting { try await gatt.read(uuid: Self.level) }
        #expect(requests == 1)
        #expect(everywhere == [
            GATTHandleValue(handle: handles.levelInBattery, value: [1, 2, 3]), GATTHandleValue(handle: handles.levelInDevice, value: [9]),
        ])
        let device = try #require(gatt.cache.services.first { $0.uuid == Self.device })
        #expect(try await gatt.read(uuid: Self.level, startingHandle: device.handle, endingHandle: device.endHandle)
            == [GATTHandleValue(handle: handles.levelInDevice, value: [9])], "only the range asked for")

        let (values, variableRequests) = try await scene.counting {
            try await gatt.readMultipleVariable(handles: [handles.levelInBattery, handles.fixed, handles.notes])
        }
        #expect(variableRequests == 1)
        #expect(values == [[1, 2, 3], [0xF0], [4, 5]])
        let (joined, concatenatedRequests) = try await scene.counting {
            try await gatt.readMultipleConcatenated(handles: [handles.levelInBattery, handles.fixed])
        }
        #expect(concatenatedRequests == 1)
        #expect(joined == [1, 2, 3, 0xF0])
        // A handle the server does not have: its Error Response, typed.
        await #expect(throws: GATTError.procedure(.errorResponse(.invalidHandle, requestOpcode: .readMultipleVariableRequest, handle: 0x0F00))) {
            try await gatt.readMultipleVariable(handles: [handles.levelInBattery, 0x0F00])
        }
        await scene.close()
    }

    @Test("a long write at an offset and reliable writes: one engine request each; a refused part cancels them all")
    func longAndReliableWrites() async throws {
        let scene = try await Self.scene()
        let gatt = scene.gatt
        let handles = scene.handles
        _ = try await gatt.discoverAll()

        // 40 octets, then 30 more from offset 40: Prepare Writes of ATT_MTU − 5 = 18 octets each.
        let head = (0..<40).map { UInt8($0) }, tail = (0..<30).map { UInt8(0x80 + $0) }
        try await gatt.writeLong(head, to: handles.levelInBattery)
        let ((), offsetRequests) = try await scene.counting { try await gatt.writeLong(tail, to: handles.levelInBattery, offset: 40) }
        #expect(offsetRequests == 1)
        #expect(try await gatt.readLong(handle: handles.levelInBattery) == head + tail)

        let ((), reliableRequests) = try await scene.counting {
            try await gatt.reliableWrite([(handles.notes, [0x11, 0x22]), (handles.spare, (0..<25).map { UInt8($0) })])
        }
        #expect(reliableRequests == 1)
        #expect(try await gatt.read(handle: handles.notes) == [0x11, 0x22])
        #expect(try await gatt.readLong(handle: handles.spare) == (0..<25).map { UInt8($0) })

        // Fixed is read-only: its Prepare Write is refused, the client cancels the queue (Execute Write,
        // cancel), so the part already prepared for Notes is never written.
        let ((), failedRequests) = await scene.counting {
            await #expect(throws: GATTError.procedure(.errorResponse(.writeNotPermitted, requestOpcode: .prepareWriteRequest, handle: handles.fixed))) {
                try await gatt.reliableWrite([(handles.notes, [0x33]), (handles.fixed, [0x44])])
            }
        }
        #expect(failedRequests == 1)
        #expect(try await gatt.read(handle: handles.notes) == [0x11, 0x22], "all or nothing: Notes unchanged")
        #expect(try await gatt.read(handle: handles.fixed) == [0xF0])
        await scene.close()
    }

    @Test("dump: the whole database and every readable value, one request for the discovery and one per value")
    func dump() async throws {
        let scene = try await Self.scene()
        let handles = scene.handles
        let (dump, requests) = try await scene.counting { try await scene.gatt.dump() }
        #expect(dump.values[handles.levelInBattery] == [1, 2, 3] && dump.values[handles.notes] == [4, 5])
        #expect(dump.values[handles.spare] == [6] && dump.values[handles.levelInDevice] == [9] && dump.values[handles.fixed] == [0xF0])
        #expect(dump.values[handles.notes + 2] == Array("notes".utf8), "the user description descriptor")
        let device = try #require(dump.services.first { $0.service.uuid == Self.device })
        #expect(device.includes.map(\.uuid) == [Self.battery])
        #expect(dump.readErrors.isEmpty)
        #expect(requests == UInt32(1 + dump.values.count), "one discovery, then one request per value read")
        #expect(scene.gatt.cache.characteristics(withUUID: Self.level).count == 2, "the cache holds what the dump discovered")
        await scene.close()
    }
}
