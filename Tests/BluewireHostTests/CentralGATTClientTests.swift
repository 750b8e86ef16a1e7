@_spi(Testing) import Bluewire
import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import Testing

/// The central GATT client over a live Host: a scripted controller with an in-process GATT server as
/// the peer (`CentralTestPeripheral`), every PDU crossing HCI ACL as it would on a real link.
@Suite("Central GATT client", .timeLimit(.minutes(1)))
struct CentralGATTClientTests {
    @Test("discovery walks the state machine through DiscoveringServices and DiscoveringCharacteristics and fills the cache")
    func discoveryDrivesTheStateMachine() async throws {
        let bench = try await CentralTestBench.make()
        let transitions = bench.gatt.transitions()
        let services = try await bench.gatt.discoverServices()
        #expect(services.map(\.uuid) == [.genericAccess, .genericAttribute, BluetoothUUID(0xFFE0)])
        let characteristics = try await bench.gatt.discoverCharacteristics(of: services[2])
        #expect(characteristics.map(\.valueHandle) == [
            bench.fixture.counter.valueHandle, bench.fixture.long.valueHandle, bench.fixture.control.valueHandle,
        ])
        #expect(bench.gatt.cache.characteristics[services[2].handle] == characteristics)
        #expect(bench.gatt.state == .connected(.discoveredCharacteristic))
        await bench.host.close()
        var seen: [String] = []
        for await transition in transitions { seen.append("\(transition.trigger)->\(transition.to)") }
        #expect(Array(seen.prefix(4)) == [
            "DiscoverServices->Connected.DiscoveringServices", "OperationCompleted->Connected.Idle",
            "DiscoverCharacteristics->Connected.DiscoveringCharacteristics",
            "OperationCompleted->Connected.DiscoveredCharacteristic",
        ])
        #expect(seen.last == "Disconnect->Disconnected.Initial")
    }

    @Test("a read before any discovery is refused by the state machine, naming Connected.Idle and Read, and sends nothing")
    func readBeforeDiscoveryIsRefused() async throws {
        let bench = try await CentralTestBench.make()
        let error = await #expect(throws: GATTError.self) { try await bench.gatt.read(handle: bench.fixture.deviceName.valueHandle) }
        #expect(error == .refused(ConnectionTriggerRefused(state: .connected(.idle), trigger: .read)))
        #expect(!bench.peripheral.receivedPDUs.contains { $0.first == ATTOpcode.readRequest.rawValue })
        #expect(bench.gatt.state == .connected(.idle))
        await bench.host.close()
    }

    @Test("a 300-byte value reads whole through Read Blob at the default ATT_MTU of 23")
    func longValueReadsWhole() async throws {
        let bench = try await CentralTestBench.make()
        let long = try await bench.discoveredCharacteristic(uuid: BluetoothUUID(0xFFE2))
        let value = try await bench.gatt.read(long)
        #expect(value == bench.fixture.longValue)
        let blobs = bench.peripheral.receivedPDUs.filter { $0.first == ATTOpcode.readBlobRequest.rawValue }
        #expect(blobs.count == 300 / 22, "one Read Request of 22 octets, then a Read Blob for each further 22")
        #expect(bench.gatt.state == .connected(.discoveredCharacteristic))
        await bench.host.close()
    }

    @Test("write, write without response, long write and reliable write all reach the server's database")
    func writesReachTheServer() async throws {
        let bench = try await CentralTestBench.make()
        let control = try await bench.discoveredCharacteristic(uuid: BluetoothUUID(0xFFE3))
        let long = try await bench.discoveredCharacteristic(uuid: BluetoothUUID(0xFFE2))
        try await bench.gatt.write([0xA1], to: control.valueHandle)
        #expect(bench.peripheral.server.database[handle: control.valueHandle]?.cachedValue == [0xA1])
        try await bench.gatt.writeWithoutResponse([0xB2, 0xB3], to: control.valueHandle)
        #expect(try await bench.gatt.read(control) == [0xB2, 0xB3], "the Write Command went out before the later Read")
        let longValue = (0..<100).map { UInt8($0) }
        try await bench.gatt.write(longValue, to: long)
        #expect(bench.peripheral.server.database[handle: long.valueHandle]?.cachedValue == longValue)
        #expect(bench.peripheral.receivedPDUs.contains { $0.first == ATTOpcode.executeWriteRequest.rawValue })
        try await bench.gatt.reliableWrite([(control.valueHandle, [0xC4]), (long.valueHandle, [1, 2, 3])])
        #expect(bench.peripheral.server.database[handle: control.valueHandle]?.cachedValue == [0xC4])
        #expect(bench.peripheral.server.database[handle: long.valueHandle]?.cachedValue == [1, 2, 3])
        #expect(bench.gatt.state == .connected(.discoveredCharacteristic))
        await bench.host.close()
    }

    @Test("notifications sent with the CCCD's Write Response are all delivered, in order, to a consumer that iterates later")
    func subscriptionLosesNothing() async throws {
        let bench = try await CentralTestBench.make()
        let counter = try await bench.discoveredCharacteristic(uuid: BluetoothUUID(0xFFE1))
        _ = try await bench.gatt.discoverDescriptors(of: counter)
        let cccd = try #require(bench.fixture.counter.clientConfigurationHandle)
        bench.peripheral.burst(count: 50, on: counter.valueHandle, whenSubscribedAt: cccd)
        let subscription = try await bench.gatt.subscribe(to: counter)
        #expect(bench.gatt.state == .connected(.notificationsEnabled))
        // The burst is in the Host's hands before anyone iterates.
        _ = try await bench.gatt.read(handle: bench.fixture.deviceName.valueHandle)
        var sequence: [Int] = []
        for try await notification in subscription {
            sequence.append(Int(notification.value[notification.value.startIndex]) | Int(notification.value[notification.value.startIndex + 1]) << 8)
            if sequence.count == 50 { break }
        }
        #expect(sequence == Array(0..<50))
        try await bench.gatt.unsubscribe(subscription)
        #expect(bench.peripheral.server.clientConfigurations(for: CentralTestPeripheral.handle)[cccd] == nil)
        #expect(bench.gatt.state == .connected(.discoveredCharacteristic))
        var after = subscription.makeAsyncIterator()
        #expect(try await after.next() == nil, "an unsubscribed sequence ends normally")
        await bench.host.close()
    }

    @Test("a subscription nobody holds any more stops being buffered by the Host; one still held keeps receiving")
    func droppedSubscriptionIsReleased() async throws {
        let bench = try await CentralTestBench.make()
        let counter = try await bench.discoveredCharacteristic(uuid: BluetoothUUID(0xFFE1))
        let kept = try await bench.gatt.subscribe(to: counter)
        do {
            let dropped = try await bench.gatt.subscribe(to: counter)
            #expect(dropped.characteristic == counter)
        }
        try await bench.host.until("the dropped subscription is released") { $0.notificationSubscribers == 1 }
        bench.peripheral.send(att: .handleValueNotification(handle: counter.valueHandle, value: [9]))
        var iterator = kept.makeAsyncIterator()
        #expect(try await iterator.next()?.value == [9])
        await bench.host.close()
    }

    @Test("a custom composite operation runs on the connection's queue with the Connection as its ATT performer")
    func customOperationUsesTheConnectionAsPerformer() async throws {
        struct EnableAndCollect: GATTOperation {
            let valueHandle: UInt16, descriptorHandle: UInt16, count: Int
            func execute(on context: any ATTRequestPerformer) async throws(GATTError) -> [UInt8] {
                // Registered before the CCCD write: the burst that follows its response is all seen.
                var updates = await context.notifications(for: valueHandle).makeAsyncIterator()
                let response: ATTPDU
                do throws(ConnectionError) {
                    response = try await context.request(.writeRequest(handle: descriptorHandle, value: [0x01, 0x00]))
                } catch {
                    throw GATTError(error)
                }
                guard case .writeResponse = response else { throw .procedure(.unexpected(response, to: .writeRequest)) }
                var firsts: [UInt8] = []
                while firsts.count < count, let value = await updates.next() { firsts.append(value[value.startIndex]) }
                return firsts
            }
        }
        let bench = try await CentralTestBench.make()
        let cccd = try #require(bench.fixture.counter.clientConfigurationHandle)
        bench.peripheral.burst(count: 5, on: bench.fixture.counter.valueHandle, whenSubscribedAt: cccd)
        let firsts = try await bench.gatt.run(EnableAndCollect(valueHandle: bench.fixture.counter.valueHandle, descriptorHandle: cccd, count: 5))
        #expect(firsts == [0, 1, 2, 3, 4])
        #expect(bench.gatt.state == .connected(.idle), "a custom operation does not drive the state machine")
        try await bench.host.until("the operation's stream is released") { $0.notificationSubscribers == 0 }
        await bench.host.close()
    }

    @Test("indications arrive as indications and are confirmed to the server")
    func indicationsAreConfirmed() async throws {
        let bench = try await CentralTestBench.make()
        let counter = try await bench.discoveredCharacteristic(uuid: BluetoothUUID(0xFFE1))
        let subscription = try await bench.gatt.subscribe(to: counter, indications: true)
        for value: UInt8 in 1...3 { bench.peripheral.send(att: .handleValueIndication(handle: counter.valueHandle, value: [value])) }
        var iterator = subscription.makeAsyncIterator()
        for value: UInt8 in 1...3 {
            let notification = try #require(try await iterator.next())
            #expect(notification.isIndication && Array(notification.value) == [value])
        }
        _ = try await bench.gatt.read(handle: counter.valueHandle)
        #expect(bench.peripheral.receivedPDUs.filter { $0 == [ATTOpcode.handleValueConfirmation.rawValue] }.count == 3)
        await bench.host.close()
    }

    @Test("a Service Changed indication drops the affected services from the cache and reads of them are refused")
    func serviceChangedInvalidatesTheCache() async throws {
        let bench = try await CentralTestBench.make()
        let database = try await bench.gatt.discoverAll()
        let serviceChanged = try #require(database.flatMap(\.characteristics).first { $0.characteristic.uuid == .serviceChanged })
        let counter = try #require(database.flatMap(\.characteristics).first { $0.characteristic.uuid == BluetoothUUID(0xFFE1) })
        let changes = bench.gatt.serviceChanges()
        _ = try await bench.gatt.subscribe(to: serviceChanged.characteristic, indications: true)
        let affected = database[2].service
        bench.peripheral.send(att: .handleValueIndication(
            handle: serviceChanged.characteristic.valueHandle,
            value: [lo(affected.handle), hi(affected.handle), lo(affected.handle + 1), hi(affected.handle + 1)]))
        var iterator = changes.makeAsyncIterator()
        let range = try #require(await iterator.next())
        #expect(range == affected.handle...affected.endHandle, "widened to the whole service that overlapped")
        #expect(!bench.gatt.cache.services.contains(affected))
        #expect(bench.gatt.cache.services.count == 2)
        await #expect(throws: GATTError.notDiscovered(handle: counter.characteristic.valueHandle)) {
            try await bench.gatt.read(counter.characteristic)
        }
        let rediscovered = try await bench.gatt.discoverServices()
        #expect(rediscovered.contains(affected))
        await bench.host.close()
    }

    @Test("dump reads every readable value; its attribute table matches the server's database handle for handle")
    func dumpMatchesTheServerDatabase() async throws {
        let bench = try await CentralTestBench.make()
        try await bench.gatt.exchangeMTU()
        let dump = try await bench.gatt.dump()
        let server = bench.fixture.database.attributes
        #expect(dump.attributes.map(\.handle) == server.map(\.handle))
        #expect(dump.attributes.map(\.type) == server.map(\.type))
        for (mine, theirs) in zip(dump.attributes, server) {
            if theirs.type == .clientCharacteristicConfiguration {
                #expect(mine.value == [0, 0], "a CCCD reads as this client's configuration")
            } else if mine.value != nil || theirs.permissions.contains(.read) {
                #expect(mine.value == theirs.cachedValue, "handle 0x\(hex(theirs.handle, width: 4))")
            }
        }
        #expect(dump.values[bench.fixture.long.valueHandle] == bench.fixture.longValue)
        await bench.host.close()
    }
}

extension CentralTestBench {
    /// Discovers services and the characteristics of the one holding a characteristic of type `uuid`.
    func discoveredCharacteristic(uuid: BluetoothUUID) async throws -> GATTCharacteristic {
        for service in try await gatt.discoverServices() {
            if let found = try await gatt.discoverCharacteristics(of: service).first(where: { $0.uuid == uuid }) { return found }
        }
        throw GATTError.notDiscovered(handle: 0)
    }
}
