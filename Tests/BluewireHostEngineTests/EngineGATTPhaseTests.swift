import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import BluewireTesting
import Testing

/// The engine's GATT client procedures on the peer's connection state machine (HostEngine+ClientPhases,
/// Docs/Design.md), between two engines on the virtual link with radio timing: each procedure's trigger
/// when it starts, OperationCompleted when it ends, the subscription triggers, and the table's refusals
/// (a read or write before any discovery) as `.refused` errors with nothing sent.
@Suite("Host engine: GATT procedures through the peer's state machine")
struct EngineGATTPhaseTests {
    static let peer = EnginesOnVirtualLink.peripheralAddress

    struct Scene {
        var link: EnginesOnVirtualLink
        var handle: UInt16
        var readable: GATTCharacteristic
        var refusing: GATTCharacteristicHandles
    }

    /// A service with a readable, writable, notifiable characteristic and one whose reads the server
    /// refuses (write-only); connected, nothing discovered yet, events taken.
    static func scene() throws -> Scene {
        var link = try EnginesOnVirtualLink(timing: .radio(), recordsPackets: true)
        var builder = GATTDatabaseBuilder()
        try builder.addService(BluetoothUUID(0xFE10))
        let readable = try builder.addCharacteristic(
            BluetoothUUID(0xFE11), properties: [.read, .write, .notify], permissions: [.read, .write], value: .dynamic(.stored([0x11])))
        let refusing = try builder.addCharacteristic(
            BluetoothUUID(0xFE12), properties: [.write], permissions: [.write], value: .dynamic(.stored([0x22])))
        link.peripheral.engine.setDatabase(builder.build())
        let handle = try link.connect()
        _ = link.central.takeEvents()
        // As discovery would find it: declaration, value, then its CCCD up to the next declaration.
        let characteristic = GATTCharacteristic(
            handle: readable.declarationHandle, valueHandle: readable.valueHandle, properties: [.read, .write, .notify],
            uuid: BluetoothUUID(0xFE11), endHandle: refusing.declarationHandle - 1)
        return Scene(link: link, handle: handle, readable: characteristic, refusing: refusing)
    }

    /// "from --Trigger--> to" of every `.stateChanged` the central emitted for the peer.
    static func transitions(_ events: [HostEngineEvent]) -> [String] {
        events.compactMap {
            guard case .stateChanged(let address, let transition, _) = $0, address == peer else { return nil }
            return "\(transition)"
        }
    }

    /// ATT PDUs' opcodes the central sent, from its recorded ACL packets (CID 4).
    static func attOpcodes(_ link: EnginesOnVirtualLink) -> [UInt8] {
        link.packets.compactMap { packet in
            guard packet.station == 0, packet.direction == .hostToController, packet.packet.type == .acl else { return nil }
            let payload = Array(packet.packet.payload)
            guard payload.count > 8, payload[6] == 0x04, payload[7] == 0x00 else { return nil }
            return payload[8]
        }
    }

    @Test("before any discovery: read, long read, write, Write Command and subscribe are refused in Connected.Idle, and nothing is sent")
    func refusedBeforeDiscovery() throws {
        var scene = try Self.scene()
        let handle = scene.handle, value = scene.readable.valueHandle
        let before = Self.attOpcodes(scene.link).count
        let requests: [(GATTClientRequest, ConnectionTrigger)] = [
            (.read(handle: value), .read), (.readLong(handle: value), .read), (.readMultiple(handles: [value, value]), .read),
            (.write(handle: value, value: [1]), .write), (.writeWithoutResponse(handle: value, value: [1]), .write),
            (.subscribe(scene.readable, indications: false, descriptorHandle: nil), .write),
        ]
        for (request, trigger) in requests {
            let id = scene.link.perform(.gatt(connection: handle, request), on: 0)
            #expect(scene.link.central.result(id) == .failure(.refused(state: .connected(.idle), trigger: trigger)), "\(request)")
        }
        scene.link.run(for: .milliseconds(200))
        #expect(Self.attOpcodes(scene.link).count == before, "nothing went on the air")
        #expect(Self.transitions(scene.link.central.takeEvents()).isEmpty)
        #expect(scene.link.central.engine.state(of: Self.peer) == .connected(.idle))
        // The link is still usable: a discovery goes ahead.
        let services = try scene.link.discover(handle)
        #expect(services.map(\.service.uuid).contains(BluetoothUUID(0xFE10)))
    }

    @Test("discover, read, write, subscribe, unsubscribe: each trigger in order, ending where the table says")
    func phasesInOrder() throws {
        var scene = try Self.scene()
        let handle = scene.handle, value = scene.readable.valueHandle
        try scene.link.discover(handle)
        let read = scene.link.perform(.gatt(connection: handle, .read(handle: value)), on: 0)
        let write = scene.link.perform(.gatt(connection: handle, .write(handle: value, value: [0x33])), on: 0)
        let subscribe = scene.link.perform(.gatt(connection: handle, .subscribe(scene.readable, indications: false, descriptorHandle: nil)), on: 0)
        let readWhileSubscribed = scene.link.perform(.gatt(connection: handle, .read(handle: value)), on: 0)
        let unsubscribe = scene.link.perform(.gatt(connection: handle, .unsubscribe(scene.readable, descriptorHandle: nil)), on: 0)
        try scene.link.run(until: { $0.central.result(unsubscribe) != nil }, within: .seconds(5))
        #expect(scene.link.central.result(read) == .success(.value([0x11])))
        #expect(scene.link.central.result(write) == .success(.done))
        #expect(scene.link.central.result(readWhileSubscribed) == .success(.value([0x33])))
        guard case .success(.configured)? = scene.link.central.result(subscribe),
              case .success(.configured)? = scene.link.central.result(unsubscribe) else {
            Issue.record("subscribe \(String(describing: scene.link.central.result(subscribe))), unsubscribe \(String(describing: scene.link.central.result(unsubscribe)))")
            return
        }
        #expect(Self.transitions(scene.link.central.takeEvents()) == [
            "Connected.Idle --DiscoverServices--> Connected.DiscoveringServices",
            "Connected.DiscoveringServices --OperationCompleted--> Connected.Idle",
            "Connected.Idle --DiscoverCharacteristics--> Connected.DiscoveringCharacteristics",
            "Connected.DiscoveringCharacteristics --OperationCompleted--> Connected.DiscoveredCharacteristic",
            "Connected.DiscoveredCharacteristic --Read--> Connected.ReadingCharacteristic",
            "Connected.ReadingCharacteristic --OperationCompleted--> Connected.DiscoveredCharacteristic",
            "Connected.DiscoveredCharacteristic --Write--> Connected.WritingCharacteristic",
            "Connected.WritingCharacteristic --OperationCompleted--> Connected.DiscoveredCharacteristic",
            "Connected.DiscoveredCharacteristic --Write--> Connected.WritingCharacteristic",
            "Connected.WritingCharacteristic --OperationCompleted--> Connected.DiscoveredCharacteristic",
            "Connected.DiscoveredCharacteristic --EnableNotifications--> Connected.NotificationsEnabled",
            "Connected.NotificationsEnabled --Read--> Connected.ReadingCharacteristic(notifications on)",
            "Connected.ReadingCharacteristic(notifications on) --OperationCompleted--> Connected.NotificationsEnabled",
            "Connected.NotificationsEnabled --Write--> Connected.WritingCharacteristic(notifications on)",
            "Connected.WritingCharacteristic(notifications on) --OperationCompleted--> Connected.NotificationsEnabled",
            "Connected.NotificationsEnabled --DisableNotifications--> Connected.DiscoveredCharacteristic",
        ])
        #expect(scene.link.central.engine.state(of: Self.peer) == .connected(.discoveredCharacteristic))
    }

    @Test("an ATT Error Response completes the phase (OperationCompleted) and the link goes on; a Write Command does not move the machine")
    func errorResponseCompletes() throws {
        var scene = try Self.scene()
        let handle = scene.handle
        try scene.link.discover(handle)
        _ = scene.link.central.takeEvents()
        let refused = scene.link.perform(.gatt(connection: handle, .read(handle: scene.refusing.valueHandle)), on: 0)
        let next = scene.link.perform(.gatt(connection: handle, .read(handle: scene.readable.valueHandle)), on: 0)
        let command = scene.link.perform(.gatt(connection: handle, .writeWithoutResponse(handle: scene.readable.valueHandle, value: [0x44])), on: 0)
        try scene.link.run(until: { $0.central.result(next) != nil }, within: .seconds(5))
        guard case .failure(.gatt(let error))? = scene.link.central.result(refused) else {
            Issue.record("expected an ATT error, got \(String(describing: scene.link.central.result(refused)))")
            return
        }
        #expect(error.attErrorCode == .readNotPermitted)
        // A command has no transaction: accepted (a characteristic is discovered) while a read waits, and
        // sent at once, ahead of the queued read, which then reads what it wrote.
        #expect(scene.link.central.result(next) == .success(.value([0x44])))
        #expect(scene.link.central.result(command) == .success(.done))
        #expect(Self.transitions(scene.link.central.takeEvents()) == [
            "Connected.DiscoveredCharacteristic --Read--> Connected.ReadingCharacteristic",
            "Connected.ReadingCharacteristic --OperationCompleted--> Connected.DiscoveredCharacteristic",
            "Connected.DiscoveredCharacteristic --Read--> Connected.ReadingCharacteristic",
            "Connected.ReadingCharacteristic --OperationCompleted--> Connected.DiscoveredCharacteristic",
        ])
    }

    @Test("cachedDiscovery: handles known from before are accepted with no traffic; refused while notifications are enabled")
    func cachedDiscovery() throws {
        var scene = try Self.scene()
        let handle = scene.handle
        let before = Self.attOpcodes(scene.link).count
        let cached = scene.link.perform(.gatt(connection: handle, .cachedDiscovery), on: 0)
        #expect(scene.link.central.result(cached) == .success(.done))
        #expect(Self.attOpcodes(scene.link).count == before)
        #expect(Self.transitions(scene.link.central.takeEvents()) == [
            "Connected.Idle --DiscoverCharacteristics--> Connected.DiscoveringCharacteristics",
            "Connected.DiscoveringCharacteristics --OperationCompleted--> Connected.DiscoveredCharacteristic",
        ])
        let subscribe = scene.link.perform(.gatt(connection: handle, .subscribe(scene.readable, indications: false, descriptorHandle: nil)), on: 0)
        try scene.link.run(until: { $0.central.result(subscribe) != nil }, within: .seconds(5))
        #expect(scene.link.central.engine.state(of: Self.peer) == .connected(.notificationsEnabled))
        let again = scene.link.perform(.gatt(connection: handle, .cachedDiscovery), on: 0)
        #expect(scene.link.central.result(again) == .failure(.refused(state: .connected(.notificationsEnabled), trigger: .discoverCharacteristics)))
    }
}
