@_spi(Testing) import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import Testing

/// A controller that stops answering, and one that reports a Hardware Error, under a Host on the
/// virtual link, in virtual time: each pending call ends with a typed error at the instant the
/// specification's rules (and the Host's configured command timeout) say, and the Host is usable
/// again once the controller is.
@Suite("Fault injection: a controller that stops answering or fails", .timeLimit(.minutes(1)))
struct FaultInjectionControllerTests {
    static let commandTimeout = TimeSpan.seconds(2)

    @Test("a command the controller swallows fails with the timeout naming its opcode, exactly at the command timeout; the command queued behind it then runs")
    func swallowedCommandTimesOut() async throws {
        let bench = try await FaultBench.make(commandTimeout: Self.commandTimeout)
        bench.centralController.faults.silentOpcodes = [HCIOpcode.readBDADDR.rawValue]
        let start = bench.clock.monotonicNow
        let swallowed = Completion(), queued = Completion()
        let silent = Task {
            defer { swallowed.finish() }
            _ = try await bench.central.send(.readBDADDR)
        }
        // The controller grants one command credit: this one waits until the first is answered or
        // given up on.
        try await bench.central.until("the first command is sent") { $0.commandWaiters == 1 }
        let behind = Task {
            defer { queued.finish() }
            return try await bench.central.send(.leReadBufferSize)
        }
        try await bench.settleQuiet("both commands wait") { await bench.central.diagnostics.commandWaiters == 2 }

        await bench.clock.advance(to: start + TimeSpan(microseconds: Self.commandTimeout.microseconds - 1))
        try await bench.settleQuiet("nothing moves before the timeout")
        #expect(!swallowed.isDone && !queued.isDone, "a command failed before its timeout")

        await bench.clock.advance(to: start + Self.commandTimeout)
        #expect(bench.clock.monotonicNow == start + Self.commandTimeout)
        let failure = await silent.result
        expectHostError(failure, "the swallowed command") { if case .command(.timeout(.readBDADDR)) = $0 { true } else { false } }
        if case .failure(let error) = failure {
            #expect("\(error)".contains("Read BD_ADDR"), "the error names the command: \(error)")
            #expect("\(error)".contains("timeout"), "\(error)")
        }
        // The credit the silent controller never returned is assumed back: the next command went out
        // at once and was answered.
        await #expect(throws: Never.self) { try await behind.value }

        // The controller answers again: the same command works, and so does a connection.
        bench.centralController.faults.silentOpcodes = []
        _ = try await bench.central.send(.readBDADDR)
        try await Self.expectUsable(bench)
        await bench.close()
    }

    @Test("an unresponsive controller: each command fails with the timeout naming it, one command timeout after it was sent; the Host works once the controller answers again")
    func unresponsiveController() async throws {
        let bench = try await FaultBench.make(commandTimeout: Self.commandTimeout)
        bench.centralController.faults.isUnresponsive = true
        let start = bench.clock.monotonicNow
        let first = Completion(), second = Completion()
        let a = Task {
            defer { first.finish() }
            _ = try await bench.central.send(.readBDADDR)
        }
        try await bench.central.until("the first command is sent") { $0.commandWaiters == 1 }
        let b = Task {
            defer { second.finish() }
            _ = try await bench.central.send(.leReadBufferSize)
        }
        try await bench.settleQuiet("both commands wait") { await bench.central.diagnostics.commandWaiters == 2 }

        await bench.clock.advance(to: start + Self.commandTimeout)
        expectHostError(await a.result, "the first command") { if case .command(.timeout(.readBDADDR)) = $0 { true } else { false } }
        // The second went out when the first was given up on, so its own timeout runs from there.
        try await bench.settleQuiet("the second command waits")
        #expect(!second.isDone, "the second command ended before its own timeout")
        await bench.clock.advance(to: start + Self.commandTimeout + Self.commandTimeout)
        expectHostError(await b.result, "the second command") { if case .command(.timeout(.leReadBufferSize)) = $0 { true } else { false } }
        #expect(await bench.central.diagnostics.commandWaiters == 0)

        bench.centralController.faults.isUnresponsive = false
        _ = try await bench.central.send(.readBDADDR)
        try await Self.expectUsable(bench)
        await bench.close()
    }

    @Test("a Hardware Error on the central's controller: the Host fails the pending GATT operation, command and scan, resets and brings the controller up again, then reports it; a new scan and connection work")
    func hardwareErrorOnCentral() async throws {
        let bench = try await FaultBench.make(commandTimeout: Self.commandTimeout)
        let events = await bench.central.events()
        let start = bench.clock.monotonicNow
        try await Self.failPendingWork(bench, events)

        // The Host reset the controller (which forgot the link: the peripheral learns of it at its
        // supervision timeout) and brought it up again, with the same address, without virtual time.
        #expect(bench.centralController.connectionHandles.isEmpty, "the controller was reset")
        #expect(bench.centralController.randomAddress == FaultBench.centralAddress)
        #expect(bench.clock.monotonicNow == start)
        bench.peripheralController.faults.isUnresponsive = false
        await bench.clock.advance(by: FaultBench.supervisionTimeout)
        try await bench.peripheral.until("the peripheral sees the link gone") { $0.links == 0 }

        // The failed scan left the scan path in Error: a new scan is refused until it is reset.
        #expect(await bench.central.scanState == .error)
        try await bench.central.resetScan()
        var found: DiscoveredDevice?
        for try await device in await bench.central.scan(filter: AdvertisingFilter(addresses: [FaultBench.peripheralAddress])) {
            found = device
            break
        }
        #expect(found?.name == "Faults", "a scan after the reset finds the peripheral")
        // The failed link's machine is in Error: connecting again is refused until the application resets it.
        await #expect(throws: HostError.self, "Connect is refused in Error") {
            _ = try await bench.central.connect(to: FaultBench.peripheralAddress)
        }
        try await bench.central.reset(FaultBench.peripheralAddress)
        try await Self.expectUsable(bench)
        await bench.close()
    }

    /// With a GATT read, an HCI command and a scan pending, the central's controller reports a
    /// Hardware Error: each fails, naming it, and the Host reports the error once the controller is
    /// back.
    static func failPendingWork(_ bench: FaultBench, _ events: AsyncStream<HostEvent>) async throws {
        let connection = try await bench.connect()
        let gatt = await connection.gatt
        let name = try #require(try await gatt.discoverServices(uuid: .genericAccess).first)
        let deviceName = try #require(try await gatt.discoverCharacteristics(of: name).first)
        // The scan runs (its commands are done) once it reports the advertising peripheral.
        let scanning = Completion(signal: bench.signal)
        let scan = Task { () async throws -> Int in
            var seen = 0
            for try await _ in await bench.central.scan() {
                seen += 1
                scanning.finish()
            }
            return seen
        }
        try await bench.settleQuiet("the scan runs") {
            let waiters = await bench.central.diagnostics.commandWaiters
            return scanning.isDone && waiters == 0
        }
        // A read the peripheral's controller never delivers, a command the central's controller swallows.
        bench.peripheralController.faults.isUnresponsive = true
        bench.centralController.faults.silentOpcodes = [HCIOpcode.readBDADDR.rawValue]
        let read = Task { try await gatt.read(deviceName) }
        let command = Task { _ = try await bench.central.send(.readBDADDR) }
        try await bench.settleQuiet("the read, the command and the scan wait") {
            let d = await bench.central.diagnostics
            return d.requestWaiters == 1 && d.commandWaiters == 1 && d.scanning
        }
        bench.centralController.faults.silentOpcodes = []

        bench.centralController.injectHardwareError(code: 0x42)
        var sawDisconnection = false, sawHardwareError = false
        for await event in events {
            if case .disconnected(let handle, _, let reason) = event {
                #expect(handle == connection.handle && reason == .hardwareFailure)
                sawDisconnection = true
            }
            if case .hardwareError(let code) = event {
                #expect(code == 0x42)
                sawHardwareError = true
                break
            }
        }
        #expect(sawDisconnection, "the link was reported gone with Hardware Failure")
        #expect(sawHardwareError)
        await #expect(throws: GATTError.disconnected(.hardwareFailure)) { try await read.value }
        expectHostError(await command.result, "the swallowed command") { if case .hardwareError(0x42) = $0 { true } else { false } }
        expectHostError(await scan.result, "the scan") { if case .hardwareError(0x42) = $0 { true } else { false } }
        #expect(gatt.state == .error, "a Hardware Error is a failure: the link's machine is in Error")
        #expect(await bench.central.state(of: FaultBench.peripheralAddress) == .error)
        if case .host(.hardwareError(0x42))? = await bench.central.failure(of: FaultBench.peripheralAddress) {} else {
            Issue.record("the cause is the Hardware Error: \(String(describing: await bench.central.failure(of: FaultBench.peripheralAddress)))")
        }
        #expect(gatt.disconnectionReason == .hardwareFailure)
    }

    @Test("a Hardware Error on the peripheral's controller: the central is dropped, the Host resets the controller and advertises again; a central connects and is served")
    func hardwareErrorOnPeripheral() async throws {
        let bench = try await FaultBench.make(commandTimeout: Self.commandTimeout)
        let connection = try await bench.connect()
        let events = await bench.peripheral.events()
        bench.peripheralController.injectHardwareError(code: 0x17)
        for await event in events {
            if case .hardwareError(let code) = event {
                #expect(code == 0x17)
                break
            }
        }
        #expect(await bench.peripheral.connections.isEmpty)
        #expect(await bench.peripheral.diagnostics.holdsNoConnectionState)
        // The central hears nothing more from the reset controller: its supervision timeout ends the link.
        await bench.clock.advance(by: FaultBench.supervisionTimeout)
        #expect(await connection.disconnection() == .connectionTimeout)
        try await Self.expectUsable(bench)
        await bench.close()
    }

    /// A connection, a GATT read and a disconnection work, and leave nothing behind.
    static func expectUsable(_ bench: FaultBench, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await {
            // `connect` waits until the peripheral advertises again; then the connection completes
            // without virtual time (immediate timing). One that does not is caught by the suite's
            // time limit.
            let connection = try await bench.connect()
            let gatt = await connection.gatt
            let service = try #require(try await gatt.discoverServices(uuid: .genericAccess).first)
            let name = try #require(try await gatt.discoverCharacteristics(of: service).first)
            #expect(try await gatt.read(name) == Array("Fault bench".utf8), sourceLocation: sourceLocation)
            try await connection.disconnect()
        }()
        try await bench.expectNothingLeaks("after using the host again", sourceLocation: sourceLocation)
    }
}

/// Expects `result` to be a failure with a `HostError` that `matches` accepts.
func expectHostError<Success>(
    _ result: Result<Success, any Error>, _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
    matches: (HostError) -> Bool
) {
    switch result {
    case .success:
        Issue.record("\(what) succeeded", sourceLocation: sourceLocation)
    case .failure(let error as HostError):
        #expect(matches(error), "\(what) failed with \(error)", sourceLocation: sourceLocation)
    case .failure(let error):
        Issue.record("\(what) failed with \(error), not a HostError", sourceLocation: sourceLocation)
    }
}
