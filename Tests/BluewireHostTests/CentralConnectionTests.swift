import Bluewire
import BluewireCore
import BluewireHCI
import Testing

/// Creating, tuning and ending central connections against the scripted controller.
@Suite("Central connections", .timeLimit(.minutes(1)))
struct CentralConnectionTests {
    @Test("2M is preferred before connecting and a data length refused with a bare status does not fail the connection")
    func linkSetupToleratesRefusal() async throws {
        let bench = try await CentralTestBench.make()
        // Sent right behind the connection: by the time connect returns or just after.
        await bench.peripheral.waitForCommand(0x2022)
        let commands = bench.peripheral.receivedCommands
        let defaultPHY = try #require(commands.firstIndex(of: 0x2031), "LE Set Default PHY sent")
        let create = try #require(commands.firstIndex(of: 0x200D), "LE Create Connection sent")
        let dataLength = try #require(commands.firstIndex(of: 0x2022), "LE Set Data Length sent")
        #expect(defaultPHY < create && create < dataLength)
        #expect(await bench.connection.isConnected)
        await #expect(throws: HostError.self, "the explicit API reports the refusal") {
            try await bench.connection.requestDataLength()
        }
        #expect(await bench.connection.isConnected)
        await bench.host.close()
    }

    @Test("a connection that does not complete in time fails with connectionTimeout and is cancelled")
    func connectTimesOut() async throws {
        let fixture = try CentralTestDatabase()
        let peripheral = CentralTestPeripheral(database: fixture.database)
        peripheral.neverConnect()
        let host = BluetoothHost(transport: peripheral)
        try await host.start()
        let outcome = await Task { try await host.connect(to: CentralTestPeripheral.peerAddress, timeout: .milliseconds(50)) }.result
        guard case .failure(HostError.connectionTimeout(let peer)) = outcome else {
            Issue.record("expected connectionTimeout, got \(outcome)")
            return
        }
        #expect(peer == CentralTestPeripheral.peerAddress)
        await peripheral.waitForCommand(0x200E)
        await host.close()
    }

    @Test("LE Connection Complete with an error status fails the attempt: the peer's machine goes Connecting → Error with the status as the cause")
    func connectionCompleteErrorStatusIsAFailure() async throws {
        let fixture = try CentralTestDatabase()
        let peripheral = CentralTestPeripheral(database: fixture.database)
        peripheral.failConnections(status: HCIStatus(rawValue: 0x3E))
        let host = BluetoothHost(transport: peripheral)
        try await host.start()
        let peer = CentralTestPeripheral.peerAddress
        var transitions = await host.transitions(of: peer).makeAsyncIterator()
        let outcome = await Task { try await host.connect(to: peer) }.result
        guard case .failure(HostError.connectionFailed(peer, HCIStatus(rawValue: 0x3E))) = outcome else {
            Issue.record("expected connectionFailed(0x3E), got \(outcome)")
            await host.close()
            return
        }
        #expect(await transitions.next().map { "\($0.transition)" } == "Disconnected.Initial --Connect--> Disconnected.Connecting")
        let failure = await transitions.next()
        #expect(failure.map { "\($0.transition)" } == "Disconnected.Connecting --Failure--> Error")
        if case .host(.connectionFailed(_, HCIStatus(rawValue: 0x3E)))? = failure?.cause {} else {
            Issue.record("cause: \(String(describing: failure?.cause))")
        }
        #expect(await host.state(of: peer) == .error)
        await host.close()
    }

    @Test("cancelling the connecting task cancels the attempt with LE Create Connection Cancel")
    func connectIsCancellable() async throws {
        let fixture = try CentralTestDatabase()
        let peripheral = CentralTestPeripheral(database: fixture.database)
        peripheral.neverConnect()
        let host = BluetoothHost(transport: peripheral)
        try await host.start()
        let attempt = Task { try await host.connect(to: CentralTestPeripheral.peerAddress, timeout: .seconds(30)) }
        await peripheral.waitForCommand(0x200D)
        attempt.cancel()
        let outcome = await attempt.result
        guard case .failure(HostError.connectionFailed(_, let status)) = outcome else {
            Issue.record("expected connectionFailed, got \(outcome)")
            return
        }
        #expect(status == .operationCancelledByHost)
        await peripheral.waitForCommand(0x200E)
        let retry = Task { try await host.connect(to: CentralTestPeripheral.peerAddress, timeout: .milliseconds(20)) }
        await #expect(throws: HostError.self, "a new attempt may start at once") { try await retry.value }
        await host.close()
    }

    @Test("the peer's disconnection reason is reported by name")
    func disconnectionReasonByName() async throws {
        let bench = try await CentralTestBench.make()
        let events = await bench.host.events()
        bench.peripheral.disconnect(reason: .remoteUserTerminatedConnection)
        for await event in events {
            guard case .disconnected(let handle, let peer, let reason) = event else { continue }
            #expect(handle == CentralTestPeripheral.handle && peer == CentralTestPeripheral.peerAddress)
            #expect("\(reason)" == "Remote User Terminated Connection (0x13)")
            break
        }
        #expect(bench.gatt.disconnectionReason == .remoteUserTerminatedConnection)
        await bench.host.close()
    }

    @Test("a peer's L2CAP Connection Parameter Update Request is accepted and applied with LE Connection Update")
    func peerParameterUpdateIsAccepted() async throws {
        let bench = try await CentralTestBench.make()
        let events = await bench.host.events()
        // Code 0x12, identifier 7, length 8: interval 0x0010...0x0020, latency 2, timeout 0x0100.
        bench.peripheral.send(signaling: [0x12, 0x07, 0x08, 0x00, 0x10, 0x00, 0x20, 0x00, 0x02, 0x00, 0x00, 0x01])
        for await event in events {
            guard case .connectionUpdated(let handle, let interval, let latency, let timeout) = event else { continue }
            #expect(handle == CentralTestPeripheral.handle)
            #expect(interval == 0x0020 && latency == 2 && timeout == 0x0100)
            break
        }
        // Connection Parameter Update Response (0x13), same identifier, result 0x0000 accepted.
        #expect(bench.peripheral.receivedSignaling.contains([0x13, 0x07, 0x02, 0x00, 0x00, 0x00]))
        #expect(bench.peripheral.receivedCommands.contains(0x2013))
        await bench.host.close()
    }

    @Test("every connection gets its own GATT client and queue, the same on every access")
    func gattClientPerConnection() async throws {
        let bench = try await CentralTestBench.make()
        let again = await bench.connection.gatt
        #expect(again.queue === bench.gatt.queue)
        #expect(bench.gatt.state == .connected(.idle))
        #expect(await bench.gatt.mtu == 23)
        #expect(try await bench.gatt.exchangeMTU() == 517)
        await bench.host.close()
    }
}
