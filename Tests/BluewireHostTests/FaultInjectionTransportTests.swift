@_spi(Testing) import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import BluewireTransport
import HostTestSupport
import Testing

/// The transport to the controller ends while work is pending: in the middle of a packet (a byte
/// stream cut inside an ACL packet, read by Bluewire's own stream transport and H4 framer), or
/// cleanly (the transport closed under the Host). Every pending operation fails at once, without
/// any virtual time passing, with the transport's typed error where the caller is the Host's (HCI
/// commands, the scan) and with the disconnection it caused where the caller is a connection's.
@Suite("Fault injection: the transport ends", .timeLimit(.minutes(1)))
struct FaultInjectionTransportTests {
    @Test("the byte stream ends inside an ACL packet: a typed framing error, every pending operation fails at once, nothing hangs or leaks")
    func streamEndsMidPacket() async throws {
        let clock = TestClock()
        let link = VirtualLink(clock: clock, timing: .immediate)
        let centralController = link.addController(publicAddress: VirtualAddress.centralPublic)
        let peripheralController = link.addController(publicAddress: VirtualAddress.peripheralPublic)
        let bridge = try VirtualControllerStreamBridge(controller: centralController)
        defer { bridge.stop() }
        let central = BluetoothHost(
            transport: try await TransportSpec.unix(path: bridge.path).open(),
            configuration: HostConfiguration(randomAddress: FaultBench.centralAddress), clock: clock,
            logger: .provokedFailure)
        let peripheral = BluetoothHost(
            transport: VirtualTransport(controller: peripheralController),
            configuration: HostConfiguration(randomAddress: FaultBench.peripheralAddress), clock: clock,
            logger: .provokedFailure)
        try await central.start()
        try await peripheral.start()
        let fixture = try FaultDatabase()
        await peripheral.setDatabase(fixture.database)
        _ = try await peripheral.startAdvertising(try Advertisement(name: "Faults", services: [FaultDatabase.service]))

        let connection = try await central.connect(to: FaultBench.peripheralAddress, parameters: FaultBench.connectionParameters)
        let gatt = await connection.gatt
        try await gatt.exchangeMTU()
        let service = try #require(try await gatt.discoverServices(uuid: FaultDatabase.service).first)
        let characteristics = try await gatt.discoverCharacteristics(of: service)
        let counter = try #require(characteristics.first { $0.valueHandle == fixture.counter.valueHandle })
        let huge = try #require(characteristics.first { $0.valueHandle == fixture.huge.valueHandle })
        let subscription = try await gatt.subscribe(to: counter)
        let events = await central.events()

        // Pending when the stream breaks: a scan, a command the controller swallows, a subscription,
        // a wait for the disconnection, a read whose response is the packet cut, a read queued behind.
        let (firstReport, reported) = AsyncStream<Void>.makeStream()
        let scan = Task { () async throws -> Int in
            var seen = 0
            for try await _ in await central.scan() {
                seen += 1
                reported.yield()
            }
            return seen
        }
        // The scan runs once its first report arrives and its commands are answered.
        var reports = firstReport.makeAsyncIterator()
        #expect(await reports.next() != nil, "the scan reports the advertiser")
        try await central.until("the scan's commands are answered") { $0.commandWaiters == 0 }
        centralController.faults.silentOpcodes = [HCIOpcode.readBDADDR.rawValue]
        let command = Task { _ = try await central.send(.readBDADDR) }
        let notifications = Task { () async throws -> Int in
            var count = 0
            for try await _ in subscription { count += 1 }
            return count
        }
        let disconnection = Task { await connection.disconnection() }
        try await central.until("the command is sent") { $0.commandWaiters == 1 }
        // The 512-byte value's Read Response is the next ACL packet: the host gets its indicator and
        // two bytes of its header, then the stream ends.
        bridge.cutNextPacket(ofType: .acl, keepingBytes: 3)
        let start = clock.monotonicNow
        let read = Task { try await gatt.read(huge) }
        let queued = Task { try await gatt.read(handle: fixture.name.valueHandle) }

        var eventsSeen = 0
        for await _ in events { eventsSeen += 1 }  // ends: the Host shut down
        #expect(bridge.hasEnded)

        // H4 indicator 0x02 (ACL) and two of the four header bytes arrived.
        func isStreamCut(_ error: HostError) -> Bool {
            guard case .transport(.framing(let framing)) = error, case .endedMidPacket = framing.reason else { return false }
            return framing.packetType == HCIPacketType.acl.rawValue
        }
        expectHostError(await command.result, "the pending command", matches: isStreamCut)
        expectHostError(await scan.result, "the scan", matches: isStreamCut)
        let gone = GATTError.disconnected(.connectionTerminatedByLocalHost)
        await #expect(throws: gone, "the read whose response was cut") { try await read.value }
        await #expect(throws: gone, "the read queued behind it") { try await queued.value }
        await #expect(throws: gone, "the subscription") { try await notifications.value }
        #expect(await disconnection.value == .connectionTerminatedByLocalHost)
        #expect(gatt.state == .error, "the transport ending is a failure: the link's machine is in Error")
        if case .host(.transport(let error))? = await central.failure(of: gatt.connection.peer) {
            #expect(isStreamCut(.transport(error)), "the cause is the cut stream: \(error)")
        } else {
            Issue.record("the peer's failure names the transport: \(String(describing: await central.failure(of: gatt.connection.peer)))")
        }
        #expect(clock.monotonicNow == start, "no timeout was needed")

        // The Host is closed: later calls fail at once.
        expectHostError(await Task { try await central.send(.readBDADDR) }.result, "a later command") {
            if case .notRunning = $0 { true } else { false }
        }
        expectHostError(await Task { try await central.connect(to: FaultBench.peripheralAddress) }.result, "a later connection") {
            if case .notRunning = $0 { true } else { false }
        }
        let diagnostics = await central.diagnostics
        #expect(diagnostics.holdsNoConnectionState, "\(diagnostics)")
        #expect(diagnostics.eventObservers == 0)
        await central.close()
        await peripheral.close()
    }

    @Test("the transport closes under the Host: pending commands fail with the transport's error, pending GATT work with the disconnection, at once")
    func transportClosesUnderTheHost() async throws {
        let bench = try await FaultBench.make()
        let connection = try await bench.connect()
        let gatt = await connection.gatt
        let service = try #require(try await gatt.discoverServices(uuid: .genericAccess).first)
        let name = try #require(try await gatt.discoverCharacteristics(of: service).first)
        bench.peripheralController.faults.isUnresponsive = true
        bench.centralController.faults.silentOpcodes = [HCIOpcode.readBDADDR.rawValue]
        let read = Task { try await gatt.read(name) }
        let command = Task { _ = try await bench.central.send(.readBDADDR) }
        try await bench.settleQuiet("the read and the command wait") {
            let d = await bench.central.diagnostics
            return d.requestWaiters == 1 && d.commandWaiters == 1
        }
        let start = bench.clock.monotonicNow

        await bench.centralTransport.close()
        expectHostError(await command.result, "the pending command") { if case .transport(.closed) = $0 { true } else { false } }
        await #expect(throws: GATTError.disconnected(.connectionTerminatedByLocalHost)) { try await read.value }
        #expect(bench.clock.monotonicNow == start)
        try await bench.central.until("nothing is held") { $0.holdsNoConnectionState && $0.liveLinks == 0 }
        await bench.close()
    }
}
