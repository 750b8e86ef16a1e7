@_spi(Testing) import Bluewire
import BluewireCore
import BluewireSnoop
import BluewireTesting
import BluewireTransport
import Foundation
import HostTestSupport
import Synchronization
import Testing

/// `BluetoothHost` as the shell over `EngineHost` (Docs/Design.md "BluetoothHost over the engine"),
/// against the bring-up capture Bluewire recorded with a bumble controller.
@Suite("BluetoothHost shell")
struct HostShellTests {
    static func replay() throws -> (ReplayTransport, Int) {
        let url = ReplayFixtures.captures.appendingPathComponent(BringUpCapture.captureName)
        let records = try captureRecords(url)
        let sent = records.filter { $0.direction == .hostToController }.count
        return (ReplayTransport(script: ReplayScript(records: records), options: .init(strict: true)), sent)
    }

    @Test("bring-up replays byte-exactly and the host keeps the controller it learnt")
    func bringUpReplays() async throws {
        let (transport, sent) = try Self.replay()
        let host = BluetoothHost(
            transport: transport, configuration: HostConfiguration(randomAddress: BringUpCapture.recordedAddress, clearsControllerLeftoversAtStart: false),
            clock: TestClock(), logger: .provokedFailure)
        let learnt = try await host.start()
        #expect(await host.controller == learnt)
        #expect(learnt.randomAddress == BringUpCapture.recordedAddress)
        try await transport.verify()
        #expect(await transport.sentCount == sent)
        await host.close()
    }

    @Test("transitions(of:) and a refused reset before start() send nothing; bring-up then replays strictly")
    func peerCallsBeforeStartSendNothing() async throws {
        let (transport, sent) = try Self.replay()
        let watched = InboundWatchingTransport(transport)
        let host = BluetoothHost(
            transport: watched, configuration: HostConfiguration(randomAddress: BringUpCapture.recordedAddress, clearsControllerLeftoversAtStart: false),
            clock: TestClock(), logger: .provokedFailure)
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

    @Test("events() streams end when the host closes, and start() after close is refused")
    func engineEventsEndAtClose() async throws {
        let (transport, _) = try Self.replay()
        let host = BluetoothHost(
            transport: transport, configuration: HostConfiguration(randomAddress: BringUpCapture.recordedAddress, clearsControllerLeftoversAtStart: false),
            clock: TestClock(), logger: .provokedFailure)
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
