import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import Foundation
import HostTestSupport
import Testing

/// The peer's connection state machine on a Bluewire central against bumble's controllers: every
/// GATT phase against bumble's peripheral, and connection attempts against a real controller, timed
/// out in the host's virtual time or cancelled (event order only, no wall-clock durations).
@Suite("Connection state machine against bumble")
struct ConnectionStateMachineInteropTests {
    /// A random static address nobody on bumble's link advertises with.
    static let nobody = BluetoothAddress.randomStatic(0x0000_1234_5678)

    @Test("bumble's peripheral: discovery, read, write, subscribe, unsubscribe and disconnect move the peer's machine as the table says")
    func gattPhasesAgainstBumble() async throws {
        try await withGATTPeripheral { session in
            let host = session.host, peer = session.connection.peer, gatt = session.gatt
            #expect(await host.state(of: peer) == .connected(.idle))
            let transitions = await host.transitions(of: peer)
            let service = try #require(try await gatt.discoverServices(uuid: GATTInteropDatabase.service).first)
            let characteristics = try await gatt.discoverCharacteristics(of: service)
            let counter = try #require(characteristics.first { $0.uuid == GATTInteropDatabase.counter })
            let control = try #require(characteristics.first { $0.uuid == GATTInteropDatabase.control })
            _ = try await gatt.read(counter)
            try await gatt.write([0x42], to: control)
            let subscription = try await gatt.subscribe(to: counter)
            try await gatt.unsubscribe(subscription)
            try await session.connection.disconnect()
            var seen: [String] = []
            for await transition in transitions {
                seen.append("\(transition.transition)")
                if transition.trigger == .disconnect { break }
            }
            let procedures = ConnectedTransitions.discoverServices + ConnectedTransitions.discoverCharacteristics
                + ConnectedTransitions.read() + ConnectedTransitions.write() + ConnectedTransitions.subscribe
                + ConnectedTransitions.unsubscribe + ConnectedTransitions.disconnect
            #expect(seen == ConnectedTransitions.path(from: .connected(.idle), procedures))
            #expect(await host.state(of: peer) == .initial, "the peer's state outlives the link")
        }
    }

    @Test("an attempt bumble's controller never completes: Connecting, then Failure to Error when the host's virtual clock reaches the timeout; Reset leaves it")
    func connectTimeoutAgainstBumble() async throws {
        let clock = TestClock()
        try await withScanningHost(.tcp, clock: clock) { underTest, _ in
            let host = underTest.host
            let transitions = await host.transitions(of: Self.nobody)
            var iterator = transitions.makeAsyncIterator()
            let attempt = Task { try await host.connect(to: Self.nobody, timeout: .seconds(1)) }
            #expect(await iterator.next().map { "\($0.transition)" } == "Disconnected.Initial --Connect--> Disconnected.Connecting")
            await clock.advance(by: .seconds(1))
            guard case .failure(HostError.connectionTimeout(Self.nobody)) = await attempt.result else {
                Issue.record("expected connectionTimeout, got \(await attempt.result)")
                return
            }
            let failure = await iterator.next()
            #expect(failure.map { "\($0.transition)" } == "Disconnected.Connecting --Failure--> Error")
            if case .host(.connectionTimeout)? = failure?.cause {} else { Issue.record("cause: \(String(describing: failure?.cause))") }
            try await host.reset(Self.nobody)
            #expect(await iterator.next().map { "\($0.transition)" } == "Error --Reset--> Disconnected.Initial")
        }
    }

    @Test("an attempt cancelled on bumble's controller (LE Create Connection Cancel): Connecting, then Disconnect back to Initial, no failure")
    func connectCancelledAgainstBumble() async throws {
        let clock = TestClock()
        try await withScanningHost(.tcp, clock: clock) { underTest, _ in
            let host = underTest.host
            var iterator = await host.transitions(of: Self.nobody).makeAsyncIterator()
            let attempt = Task { try await host.connect(to: Self.nobody, timeout: .seconds(30)) }
            #expect(await iterator.next().map { "\($0.transition)" } == "Disconnected.Initial --Connect--> Disconnected.Connecting")
            await host.cancelConnectionAttempt()
            guard case .failure(HostError.connectionFailed(_, .operationCancelledByHost)) = await attempt.result else {
                Issue.record("expected connectionFailed(Operation Cancelled by Host), got \(await attempt.result)")
                return
            }
            #expect(await iterator.next().map { "\($0.transition)" } == "Disconnected.Connecting --Disconnect--> Disconnected.Initial")
            #expect(await host.failure(of: Self.nobody) == nil)
        }
    }
}
