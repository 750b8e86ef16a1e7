import Bluewire
import BluewireATT
import BluewireCore
import BluewireHCI
import BluewireTesting
import Testing

/// An `EngineConnection` names one link, not a handle: after its link ends, the controller gives the
/// handle to the next link (the virtual controller, like bumble's, takes the lowest free one; Core
/// Vol 4 Part E §7.7.65.1), and calls on the old value are refused with `.staleConnection` instead of
/// acting on the later link, whether that link is to another peer or to the same one again.
@Suite("EngineConnection: a stale connection after its handle is reused")
struct EngineConnectionStaleLinkTests {
    static let first = BluetoothAddress.randomStatic(0x0A0B_0C0D_0F21)
    static let second = BluetoothAddress.randomStatic(0x0A0B_0C0D_0F22)
    static let parameters = LEConnectionParameters(
        connectionIntervalMin: 0x0020, connectionIntervalMax: 0x0030, maxLatency: 0, supervisionTimeout: 0x0200)

    @Test("calls on an EngineConnection whose handle a later link got, to another peer or the same one, throw .staleConnection and leave that link alone")
    func staleConnectionIsRefused() async throws {
        let clock = TestClock()
        let link = VirtualLink(clock: clock, timing: .immediate)
        let central = EngineHost(
            transport: VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.centralPublic)),
            configuration: HostEngineConfiguration(randomAddress: .randomStatic(0x0A0B_0C0D_0F20)), clock: clock)
        let one = EngineHost(
            transport: VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.peripheralPublic)),
            configuration: HostEngineConfiguration(randomAddress: Self.first), clock: clock)
        let two = EngineHost(
            transport: VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.thirdPublic)),
            configuration: HostEngineConfiguration(randomAddress: Self.second), clock: clock)
        for host in [central, one, two] { _ = try await host.perform(.start).get() }
        _ = try await one.perform(.startAdvertising(.named("One"))).get()
        _ = try await two.perform(.startAdvertising(.named("Two"))).get()

        // The first link works, then ends: its connection says the link is unknown now.
        let toOne = try await central.connect(to: Self.first)
        #expect(toOne.link.peer == Self.first)
        #expect(try await toOne.updateParameters(Self.parameters).interval == 0x0020)
        _ = try await toOne.disconnect()
        await #expect(throws: HostEngineError.unknownConnection(toOne.handle)) { _ = try await toOne.updateParameters(Self.parameters) }

        // A link to another peer gets the same handle.
        let toTwo = try await central.connect(to: Self.second)
        try #require(toTwo.handle == toOne.handle, "the controller gives the lowest free handle")
        let staleOne = HostEngineError.staleConnection(handle: toOne.handle, peer: Self.first)
        await #expect(throws: staleOne) { _ = try await toOne.updateParameters(Self.parameters) }
        await #expect(throws: staleOne) { _ = try await toOne.perform(.discoverAll) }
        await #expect(throws: staleOne) { _ = try await toOne.pair() }
        await #expect(throws: staleOne) { _ = try await toOne.disconnect() }
        await #expect(throws: ConnectionError.disconnected(.unknownConnectionIdentifier)) {
            _ = try await toOne.request(.exchangeMTURequest(clientRxMTU: 100))
        }
        #expect(await toOne.mtu == ATTBearer.defaultMTU)
        #expect(await toOne.securityLevel == .unencrypted)
        // The later link was left alone: still up, and its own connection works.
        #expect(await central.link(toTwo.handle)?.peer == Self.second)
        #expect(try await toTwo.updateParameters(Self.parameters).interval == 0x0020)

        // It ends too, and the same peer connects again: same handle, same peer, a later link.
        _ = try await toTwo.disconnect()
        _ = await two.perform(.startAdvertising(.named("Two")))
        let again = try await central.connect(to: Self.second)
        try #require(again.handle == toTwo.handle && again.link.peer == toTwo.link.peer)
        let staleTwo = HostEngineError.staleConnection(handle: toTwo.handle, peer: Self.second)
        await #expect(throws: staleTwo) { _ = try await toTwo.updateParameters(Self.parameters) }
        await #expect(throws: staleTwo) { _ = try await toTwo.disconnect() }
        #expect(try await again.updateParameters(Self.parameters).interval == 0x0020)
        _ = try await again.disconnect()
        for host in [central, one, two] { await host.close() }
    }
}
