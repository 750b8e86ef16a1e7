import Bluewire
import BluewireCore
import BluewireHCI
import BluewireTesting
import BluewireTransport
import Foundation
import HostTestSupport
import Testing
import PeerTestSupport

/// Faulty controllers at the Host level, over a real TCP transport: silence, a corrupt byte stream,
/// an error status. These use small scripted servers (a fake, on purpose: bumble's controller cannot
/// be made to produce any of these faults). Each case must end in a typed error, never hang. The hosts
/// run on a `TestClock`: a timeout fires when a test advances virtual time to it, and a failure seen
/// with the clock never advanced cannot have waited for one (no wall-clock durations asserted).
@Suite(.timeLimit(.minutes(1))) struct HostBringUpFaultTests {
    static let shortTimeout = TimeSpan.milliseconds(300)

    static func host(_ transport: String, timeout: TimeSpan = shortTimeout, clock: TestClock = TestClock()) async throws -> BluetoothHost {
        let opened = try await TransportSpec(parsing: transport).open()
        // Bring-up alone: these scripted controllers answer LE Set Scan Enable with the fault of the
        // test (HostLeftoversAtStartBumbleTests covers the clearing at start).
        return BluetoothHost(
            transport: opened, configuration: HostConfiguration(commandTimeout: timeout, clearsControllerLeftoversAtStart: false),
            clock: clock, logger: .provokedFailure)
    }

    @Test("a controller that never answers: start() fails with the command timeout naming Reset, at the timeout in virtual time")
    func silentControllerTimesOutOnReset() async throws {
        let server = try ScriptedStreamServer(.silent)
        defer { server.stop() }
        let clock = TestClock()
        let host = try await Self.host(server.transport, clock: clock)
        let started = Task { try await host.start() }
        // Reset is out and its timeout is waiting on the clock.
        await clock.waitForSleepers()
        await clock.advance(by: .milliseconds(299))
        #expect(clock.sleeperCount == 1, "1 ms before its timeout, Reset's timer still waits")
        await clock.advance(by: .milliseconds(1))
        switch await started.result {
        case .success:
            Issue.record("start() succeeded against a silent controller")
        case .failure(let error):
            guard case .bringUp(let failure)? = error as? HostError else {
                Issue.record("expected a bring-up error, got \(error)")
                await host.close()
                return
            }
            #expect(failure.opcode == .reset)
            #expect(failure.error == .timeout(.reset))
            #expect("\(error)".contains("Reset"), "\(error)")
            #expect("\(error)".contains("timeout"), "\(error)")
        }
        #expect(clock.monotonicNow - MonotonicInstant.zero == Self.shortTimeout, "failed exactly at the command timeout")
        await host.close()
    }

    @Test("garbage during bring-up: start() fails with the transport's framing error")
    func garbageDuringBringUpIsAFramingError() async throws {
        // 0x07 is no H4 packet type (Core Vol 4 Part A §2).
        let server = try ScriptedStreamServer(.sendThenClose([0x07, 0xDE, 0xAD, 0xBE, 0xEF]))
        defer { server.stop() }
        let clock = TestClock()
        let host = try await Self.host(server.transport, timeout: .seconds(5), clock: clock)
        do {
            try await host.start()
            Issue.record("start() succeeded on a garbage stream")
        } catch {
            guard case .transport(.framing(let framing)) = error else {
                Issue.record("expected HostError.transport(.framing), got \(error)")
                await host.close()
                return
            }
            #expect(framing.reason == .unknownPacketType)
            #expect(framing.packetType == 0x07)
            #expect(framing.offset == 0)
        }
        #expect(clock.monotonicNow == .zero, "the framing error did not wait for the command timeout (virtual time never moved)")
        await host.close()
    }

    @Test("garbage after bring-up: the scan and every pending command fail, later calls are refused")
    func garbageAfterBringUpFailsEverythingPending() async throws {
        let server = try ScriptedControllerServer { opcode, _ in
            switch opcode {
            case 0xFC01: return .silence  // a vendor command bumble-like controllers ignore
            case 0x200C: return .raw([0x04, 0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00, 0x09, 0x99, 0x99])
            default: return ScriptedControllerServer.bringUpAnswer(opcode)
            }
        }
        defer { server.stop() }
        let clock = TestClock()
        let host = try await Self.host(server.transport, timeout: .seconds(10), clock: clock)
        let info = try await host.start()
        #expect(!info.supportsExtendedScanning)
        let events = await host.events()

        let vendor = Task { try await host.send(.raw(opcode: HCIOpcode(rawValue: 0xFC01), parameters: [])) }
        // The vendor command must be outstanding (sent, unanswered) when the stream breaks.
        await server.waitForOpcode(0xFC01)
        #expect(server.receivedOpcodes.contains(0xFC01))
        var scanError: (any Error)?
        do {
            for try await device in await host.scan() { Issue.record("unexpected device \(device.address)") }
        } catch {
            scanError = error
        }
        guard case .transport(.framing(let framing))? = scanError as? HostError else {
            Issue.record("scan ended with \(String(describing: scanError)), expected HostError.transport(.framing)")
            await host.close()
            return
        }
        #expect(framing.reason == .unknownPacketType && framing.packetType == 0x09, "\(framing)")

        let vendorResult = await vendor.result
        // With virtual time never advanced, no timeout can have fired: the stream's failure ended it.
        #expect(clock.monotonicNow == .zero)
        if case .failure(HostError.transport(.framing)) = vendorResult {} else {
            Issue.record("the pending vendor command must fail with the framing error, got \(vendorResult)")
        }
        await #expect(throws: HostError.self) { try await host.send(.reset) }
        var afterwards = await host.scan().makeAsyncIterator()
        await #expect(throws: HostError.self) { _ = try await afterwards.next() }
        for await _ in events {}  // finishes: observers are released on shutdown
        #expect(server.receivedOpcodes.contains(0x200C))
        await host.close()
    }

    @Test("a controller answering Reset with an error status: the error names the status")
    func resetErrorStatusIsNamed() async throws {
        let server = try ScriptedControllerServer { opcode, _ in
            opcode == 0x0C03 ? .complete([0x0C]) : ScriptedControllerServer.bringUpAnswer(opcode)
        }
        defer { server.stop() }
        let host = try await Self.host(server.transport, timeout: .seconds(5))
        do {
            try await host.start()
            Issue.record("start() succeeded though Reset failed")
        } catch {
            guard case .bringUp(let failure) = error else {
                Issue.record("expected a bring-up error, got \(error)")
                await host.close()
                return
            }
            #expect(failure.opcode == .reset)
            #expect(failure.error == .failed(.reset, HCIStatus(rawValue: 0x0C)))
            #expect("\(error)".contains("Command Disallowed"), "\(error)")
            #expect("\(error)".contains("Reset"), "\(error)")
        }
        #expect(server.receivedOpcodes == [0x0C03], "bring-up went on after a failed Reset")
        await host.close()
    }

    @Test("an error status on a scan command ends the scan with that status's name")
    func scanCommandErrorStatusEndsTheScan() async throws {
        let server = try ScriptedControllerServer { opcode, _ in
            opcode == 0x200B ? .complete([0x12]) : ScriptedControllerServer.bringUpAnswer(opcode)
        }
        defer { server.stop() }
        let host = try await Self.host(server.transport, timeout: .seconds(5))
        try await host.start()
        do {
            for try await _ in await host.scan(duration: .seconds(5)) {}
            Issue.record("the scan ran though LE Set Scan Parameters failed")
        } catch {
            #expect("\(error)".contains("Invalid HCI Command Parameters"), "\(error)")
            #expect("\(error)".contains("LE Set Scan Parameters"), "\(error)")
        }
        #expect(await host.scanState == .error, "a failed scan is a Failure, not a StopScan")
        try await host.resetScan()
        #expect(await host.scanState == .initial)
        await host.close()
    }
}
