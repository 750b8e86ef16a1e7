import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import Testing

/// The peripheral interop scenario (what bumble's centrals prove against a Bluewire peripheral), with
/// both sides Bluewire hosts on a virtual link: the same run as the central's view, asserted from the
/// server's events; and two centrals using a chat room at once.
@Suite("VirtualLink scenario: the peripheral's view")
struct VirtualLinkScenarioPeripheralTests {
    @Test("the server sees the central connect, exchange MTUs, read (Read Blob for the long value), write, subscribe, confirm and leave, in that order",
          .timeLimit(.minutes(2)), arguments: [false, true])
    func serverSeesTheWholeSession(radio: Bool) async throws {
        let run = try await ScenarioRuns.shared.run(radio: radio)
        let events = run.peripheralEvents
        let h = run.peripheralHandle
        func position(_ match: (PeripheralEvent) -> Bool) -> Int? { events.firstIndex(where: match) }

        let connected = position { if case .connected(let c) = $0 { c.role == .peripheral && c.peer == run.centralAddress } else { false } }
        let mtu = position { $0 == .mtuChanged(connection: h, mtu: Int(ScenarioRun.peripheralMTU)) }
        let requestWrite = position {
            $0 == .write(PeripheralWrite(connection: h, handle: run.fixture.writable, value: ScenarioRun.requestValue, offset: 0, kind: nil))
        }
        let commandWrite = position {
            $0 == .write(PeripheralWrite(connection: h, handle: run.fixture.writable, value: ScenarioRun.commandValue, offset: 0, kind: nil))
        }
        let subscribed = position { $0 == .subscriptionChanged(GATTSubscription(connection: h, valueHandle: run.fixture.notifying, configuration: 1)) }
        let indicationsOn = position { $0 == .subscriptionChanged(GATTSubscription(connection: h, valueHandle: run.fixture.indicating, configuration: 2)) }
        let unsubscribed = position { $0 == .subscriptionChanged(GATTSubscription(connection: h, valueHandle: run.fixture.notifying, configuration: 0)) }
        let indicationsOff = position { $0 == .subscriptionChanged(GATTSubscription(connection: h, valueHandle: run.fixture.indicating, configuration: 0)) }
        let disconnected = position { if case .disconnected(h, run.centralAddress, _) = $0 { true } else { false } }
        let order = [connected, mtu, requestWrite, commandWrite, subscribed, indicationsOn, unsubscribed, indicationsOff, disconnected]
        #expect(order.allSatisfy { $0 != nil }, "missing events in \(events)")
        let found = order.compactMap { $0 }
        #expect(found == found.sorted(), "events out of order: \(events)")

        // At ATT_MTU 247 a Read Response holds 246 octets: the dump and the later read each take a Read
        // and one Read Blob at 246.
        let longReads = events.compactMap { event -> PeripheralRead? in
            if case .read(let read) = event, read.handle == run.fixture.long { read } else { nil }
        }
        let long = ScenarioDatabase.longValue
        #expect(longReads.map(\.offset) == [0, 246, 0, 246])
        #expect(longReads.map(\.value) == [Array(long[0..<246]), Array(long[246...]), Array(long[0..<246]), Array(long[246...])])
        #expect(run.fixture.dynamicReads.values == [0, 0], "the dynamic value's handler runs once per read: the dump's and the last one")

        let confirmations = events.filter { $0 == .indicationConfirmed(connection: h, handle: run.fixture.indicating) }
        #expect(confirmations.count == ScenarioRun.indicationCount)
        let refusals = events.filter { if case .requestRefused = $0 { true } else { false } }
        #expect(refusals.isEmpty, "\(refusals)")
        let state = try #require(run.serverStateAtEnd)
        #expect(state.mtu == Int(ScenarioRun.peripheralMTU))
        #expect(state.queuedIndications == 0 && !state.indicationOutstanding && state.pendingIndicationCalls == 0)
        #expect(state.queuedACLPackets == 0 && state.subscriptions == 0)
    }

    @Test("two centrals use a chat room at once: each write is relayed to both, in order, and the transcript reads back whole",
          .timeLimit(.minutes(2)), arguments: [false, true])
    func twoCentralsShareAChatRoom(radio: Bool) async throws {
        try await withScene(hosts: 3, radio: radio, mtus: [247, 100, 100]) { scene in
            let room = ChatRoom()
            let roomHost = scene.hosts[0]
            await roomHost.setDatabase(room.database)
            let events = await roomHost.peripheralEvents()
            let relay = Task { await room.relay(events, on: roomHost) }
            defer { relay.cancel() }
            try await roomHost.startAdvertising(try Advertisement(name: ChatRoom.name, services: [ChatRoom.service]))

            var members: [(connection: Connection, messages: CharacteristicSubscription.AsyncIterator)] = []
            for central in scene.hosts[1...] {
                let device = try await scene.find(ChatRoom.name, from: central)
                let connection = try await central.connect(to: device.address)
                let gatt = await connection.gatt
                try await gatt.exchangeMTU()
                let services = try await gatt.discoverServices(uuid: ChatRoom.service)
                let characteristics = try await gatt.discoverCharacteristics(of: try #require(services.first))
                let roomCharacteristic = try #require(characteristics.first { $0.uuid == ChatRoom.roomUUID })
                members.append((connection, try await gatt.subscribe(to: roomCharacteristic).makeAsyncIterator()))
            }
            #expect(scene.link.connections.count == 2)
            #expect(Set(scene.link.connections.map(\.peripheral)) == [0], "the room is peripheral on both links")
            #expect(await roomHost.serverConnectionCount == 2)

            let lines = ["alice: hi bob, this line is longer than twenty octets", "bob: hi alice, the room relays every line to both of us"]
            for (member, line) in zip(members, lines) {
                try await member.connection.gatt.write(Array(line.utf8), to: room.message)
            }
            for index in members.indices {
                var heard: [String] = []
                while heard.count < lines.count, let notification = try await members[index].messages.next() {
                    heard.append(String(decoding: notification.value, as: UTF8.self))
                }
                #expect(heard == lines, "member \(index) heard \(heard)")
            }
            // Longer than a Read Response at ATT_MTU 100: Read, then Read Blob.
            let transcript = try await members[1].connection.gatt.readLong(handle: room.room)
            #expect(String(decoding: transcript, as: UTF8.self) == lines.joined(separator: "\n"))
            #expect(transcript.count > 99)
            #expect(scene.violations.isEmpty, "\(scene.violations)")
            for member in members { try await member.connection.disconnect() }
        }
    }
}

/// A chat room peripheral (as Examples/ChatRoom): centrals write lines to the message
/// characteristic; the room relays each to every subscriber of the room characteristic and keeps the
/// transcript as the room characteristic's value.
struct ChatRoom: Sendable {
    static let name = "Room"
    static let service = BluetoothUUID(0xFFF0)
    static let messageUUID = BluetoothUUID(0xFFF1)
    static let roomUUID = BluetoothUUID(0xFFF2)

    let database: GATTDatabase
    let message: UInt16
    let room: UInt16

    init() {
        var builder = GATTDatabaseBuilder()
        // Cannot fail: a fresh builder with room for everything.
        _ = try? builder.addService(Self.service)
        let message = try? builder.addCharacteristic(Self.messageUUID, properties: [.write], permissions: [.write], value: .cached([]))
        let room = try? builder.addCharacteristic(Self.roomUUID, properties: [.read, .notify], permissions: [.read], value: .cached([]))
        database = builder.build()
        self.message = message?.valueHandle ?? 0
        self.room = room?.valueHandle ?? 0
    }

    /// Relays every line written to the message characteristic until `events` ends.
    func relay(_ events: AsyncStream<PeripheralEvent>, on host: BluetoothHost) async {
        var transcript: [UInt8] = []
        for await event in events {
            guard case .write(let write) = event, write.handle == message else { continue }
            transcript += (transcript.isEmpty ? [] : Array("\n".utf8)) + write.value
            try? await host.setValue(transcript, for: room)
            _ = try? await host.notify(room, value: write.value)
        }
    }
}
