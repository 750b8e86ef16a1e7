@_spi(Testing) import Bluewire
import BluewireCore
import BluewireSnoop
import BluewireTesting
import BluewireTransport
import Foundation
import Synchronization
import Testing

/// `BluetoothHost` on the engine backend (HostBackend, Docs/Design.md "BluetoothHost over the
/// engine"), for the areas moved so far, against the bring-up capture Bluewire recorded with a
/// bumble controller. The moved suites also run whole on the engine backend
/// (the default) and on the legacy one (`BLUEWIRE_HOST_BACKEND=legacy`, scripts/test.sh); the first
/// test here makes sure each run really is on the backend it names.
@Suite("BluetoothHost backends")
struct HostBackendTests {
    static func replay() throws -> (ReplayTransport, Int) {
        let url = ReplayFixtures.captures.appendingPathComponent(ReplayHostBringUpTests.captureName)
        let records = try ReplayHostBringUpTests.records(url)
        let sent = records.filter { $0.direction == .hostToController }.count
        return (ReplayTransport(script: ReplayScript(records: records), options: .init(strict: true)), sent)
    }

    @Test("a host made without a backend takes the process's: the engine, unless BLUEWIRE_HOST_BACKEND=legacy")
    func processDefaultFollowsTheEnvironment() throws {
        let (transport, _) = try Self.replay()
        let host = BluetoothHost(transport: transport)
        let wanted: HostBackend = ProcessInfo.processInfo.environment["BLUEWIRE_HOST_BACKEND"] == "legacy" ? .legacy : .engine
        #expect(HostBackend.processDefault == wanted)
        #expect(host.backend == wanted)
    }

    @Test("on the engine backend, bring-up replays byte-exactly with the same controller learnt as on the legacy one")
    func engineBringUpMatchesLegacy() async throws {
        var learnt: [HostBackend: ControllerInfo] = [:]
        for backend in [HostBackend.legacy, .engine] {
            let (transport, sent) = try Self.replay()
            let host = BluetoothHost(
                transport: transport, configuration: HostConfiguration(randomAddress: ReplayHostBringUpTests.recordedAddress),
                clock: TestClock(), logger: .provokedFailure, backend: backend)
            #expect(host.backend == backend)
            learnt[backend] = try await host.start()
            #expect(await host.controller == learnt[backend])
            try await transport.verify()
            #expect(await transport.sentCount == sent, "\(backend)")
            await host.close()
        }
        #expect(learnt[.engine] != nil)
        #expect(learnt[.engine] == learnt[.legacy])
    }

    @Test("on the engine backend, transitions(of:) and a refused reset before start() send nothing; bring-up then replays strictly")
    func peerCallsBeforeStartSendNothing() async throws {
        let (transport, sent) = try Self.replay()
        let watched = InboundWatchingTransport(transport)
        let host = BluetoothHost(
            transport: watched, configuration: HostConfiguration(randomAddress: ReplayHostBringUpTests.recordedAddress),
            clock: TestClock(), logger: .provokedFailure, backend: .engine)
        let peer = try #require(BluetoothAddress(parsing: "C0:11:22:33:44:55/random"))
        _ = await host.transitions(of: peer)
        await #expect(throws: HostError.self, "Reset is refused outside Error") { try await host.reset(peer) }
        #expect(await host.state(of: peer) == .initial)
        #expect(await transport.sentCount == 0)
        #expect(!watched.inboundTaken, "the controller's packets are not read before start()")
        try await host.start()
        #expect(watched.inboundTaken)
        try await transport.verify()
        #expect(await transport.sentCount == sent)
        await host.close()
    }

    @Test("on the engine backend, events() streams end when the host closes, and start() after close is refused")
    func engineEventsEndAtClose() async throws {
        let (transport, _) = try Self.replay()
        let host = BluetoothHost(
            transport: transport, configuration: HostConfiguration(randomAddress: ReplayHostBringUpTests.recordedAddress),
            clock: TestClock(), logger: .provokedFailure, backend: .engine)
        try await host.start()
        let events = await host.events()
        let drained = Task { var count = 0; for await _ in events { count += 1 }; return count }
        await host.close()
        #expect(await drained.value == 0)
        await #expect(throws: HostError.self) { try await host.start() }
    }
}

/// A transport that says whether a host has begun reading what the controller sends.
final class InboundWatchingTransport: HCITransport {
    let base: any HCITransport
    private let taken = Mutex(false)

    init(_ base: any HCITransport) { self.base = base }

    var inboundTaken: Bool { taken.withLock { $0 } }

    var inbound: HCIInboundPackets {
        taken.withLock { $0 = true }
        return base.inbound
    }

    func send(_ packet: HCIPacket) async throws(TransportError) { try await base.send(packet) }
    func close() async { await base.close() }
}
