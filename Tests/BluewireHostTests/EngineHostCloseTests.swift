import Bluewire
import BluewireCore
import BluewireHostEngine
import BluewireTesting
import BluewireTransport
import Synchronization
import Testing

/// A controller whose Command Complete for Reset arrives while the host is closing: `close()` awaits
/// the transport's close, and the packet is already in the inbound queue. A real controller does this
/// (an answer in flight when the application quits), but never on cue; this transport does it every
/// time, so the test can check that nothing the packet would start outlives the host.
final class AnswerDuringCloseTransport: HCITransport {
    let inbound: HCIInboundPackets
    let continuation: HCIInboundPackets.Continuation
    let taken = Locked(false)
    let sent = Locked<[HCIPacket]>([])

    init() {
        let (packets, continuation) = HCIInboundPackets.makeStream()
        self.continuation = continuation
        inbound = packets.observing { [taken] _ in taken.withLock { $0 = true } }
    }

    func send(_ packet: HCIPacket) async throws(TransportError) {
        sent.withLock { $0.append(packet) }
    }

    func close() async {
        // Reset's Command Complete (Core Vol 4 Part E §7.3.2), then wait until the host took it.
        continuation.yield(HCIPacket(type: .event, payload: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]))
        while !taken.withLock({ $0 }) { await Task.yield() }
        continuation.finish()
    }
}

@Suite("EngineHost: nothing outlives close")
struct EngineHostCloseTests {
    @Test("a packet that arrives while the host closes starts no timer and no request: close leaves nothing pending")
    func answerDuringCloseLeavesNothing() async throws {
        let transport = AnswerDuringCloseTransport()
        let clock = TestClock()
        let host = EngineHost(transport: transport, configuration: HostEngineConfiguration(randomAddress: .randomStatic(0x0C00)), clock: clock)
        let start = Task { await host.perform(.start) }
        // Reset is written and its command timer armed.
        while transport.sent.withLock({ $0.isEmpty }) { await Task.yield() }
        #expect(await host.pendingWork.timerArmed)
        await host.close()
        let pending = await host.pendingWork
        #expect(pending == .none, "\(pending)")
        guard case .failure(.notRunning) = await start.value else {
            Issue.record("the start waiting at close must fail with notRunning")
            return
        }
        // The Reset answer bring-up waited for did not make the closed host send its next command.
        #expect(transport.sent.withLock { $0.count } == 1)
        // A closed host stays closed.
        guard case .failure(.notRunning) = await host.perform(.start) else {
            Issue.record("a request after close must be refused")
            return
        }
        #expect(await host.pendingWork == .none)
    }

    @Test("a host closed before its first request never opens its transport afterwards")
    func closedBeforeOpenStaysClosed() async throws {
        let transport = AnswerDuringCloseTransport()
        let host = EngineHost(transport: transport, configuration: HostEngineConfiguration(randomAddress: .randomStatic(0x0C01)), clock: TestClock())
        await host.close()
        let start = Task { await host.perform(.start) }
        for _ in 0..<100 { await Task.yield() }
        #expect(transport.sent.withLock { $0.isEmpty }, "nothing written on a closed host's transport")
        // (A host that did open waits for Reset's answer: closing it again ends that wait.)
        if !transport.sent.withLock({ $0.isEmpty }) { await host.close() }
        guard case .failure(.notRunning) = await start.value else {
            Issue.record("a request after close must be refused")
            return
        }
        #expect(await host.pendingWork == .none)
    }
}
