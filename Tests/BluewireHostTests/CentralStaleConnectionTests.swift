@_spi(Testing) import Bluewire
import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import Testing

/// A central's `Connection` kept after its link ended never acts on the link that got its handle
/// next (the controller gives a freed handle to the next link, Core Vol 4 Part E §7.7.65.1): its
/// methods check that the handle is still the link to its peer. On the virtual link, whose
/// controller, like bumble's, gives a new link the lowest free handle.
@Suite("Central: a Connection whose handle a later link to another peer got")
struct CentralStaleConnectionTests {
    typealias Fixture = PeripheralVirtualLinkTests.Fixture

    @Test("the old Connection's request, MTU, notifications, disconnect and state act on nothing; the new link is untouched")
    func staleConnectionActsOnNothing() async throws {
        let fixture = try await Fixture(hosts: 3)
        let central = fixture.hosts[0]
        for index in 1...2 {
            await fixture.hosts[index].setDatabase(try fixture.database())
            try await fixture.hosts[index].startAdvertising(try Advertisement(name: "P\(index)", services: [PeripheralVirtualLinkTests.service]))
        }
        let old = try await central.connect(to: Fixture.address(1))
        try await old.disconnect()
        let new = try await central.connect(to: Fixture.address(2))
        try #require(new.handle == old.handle, "the controller gave the freed handle to the next link")
        #expect(new.peer != old.peer)

        #expect(await old.isConnected == false)
        #expect(await new.isConnected)
        do {
            _ = try await old.request(.readRequest(handle: 0x0003))
            Issue.record("a request on the old Connection reached the new link")
        } catch {
            guard case .disconnected = error else { Issue.record("not .disconnected: \(error)"); return }
        }
        do {
            try await old.send(command: .writeCommand(handle: 0x0003, value: [0x01]))
            Issue.record("a command on the old Connection reached the new link")
        } catch {
            guard case .disconnected = error else { Issue.record("not .disconnected: \(error)"); return }
        }
        _ = try await new.exchangeMTU()
        #expect(await new.mtu > ATTBearer.defaultMTU)
        #expect(await old.mtu == ATTBearer.defaultMTU, "the old link's MTU, not the new one's")
        var notifications = await old.notifications().makeAsyncIterator()
        #expect(await notifications.next() == nil, "no stream on another peer's link")
        _ = await old.disconnection()
        try await old.disconnect()
        #expect(await new.isConnected, "disconnecting the old Connection left the new link up")
        #expect(await new.state == .connected(.idle))
        #expect(await old.state == .initial)

        try await new.disconnect()
        await fixture.close()
    }

    @Test("the same peer connects again and gets the same handle: the old Connection is still refused, the new one works")
    func reconnectionOfTheSamePeerWithTheSameHandle() async throws {
        let fixture = try await Fixture(hosts: 2)
        let central = fixture.hosts[0]
        await fixture.hosts[1].setDatabase(try fixture.database())
        try await fixture.hosts[1].startAdvertising(try Advertisement(name: "P1", services: [PeripheralVirtualLinkTests.service]))
        let old = try await central.connect(to: Fixture.address(1))
        try await old.disconnect()
        let new = try await central.connect(to: Fixture.address(1))
        try #require(new.handle == old.handle && new.peer == old.peer, "the same peer, the freed handle")

        #expect(old != new, "two links, two Connections")
        #expect(await old.isConnected == false)
        #expect(await new.isConnected)
        do {
            _ = try await old.request(.readRequest(handle: 0x0003))
            Issue.record("a request on the old Connection reached the new link")
        } catch {
            guard case .disconnected = error else { Issue.record("not .disconnected: \(error)"); return }
        }
        _ = try await new.exchangeMTU()
        #expect(await old.mtu == ATTBearer.defaultMTU, "the old link's MTU, not the new one's")
        var notifications = await old.notifications().makeAsyncIterator()
        #expect(await notifications.next() == nil, "no stream on the new link")
        #expect(await old.gatt.disconnectionReason != nil, "the old GATT client is the ended link's")
        try await old.disconnect()
        #expect(await new.isConnected, "disconnecting the old Connection left the new link up")
        #expect(await central.connections.contains(new))
        #expect(await !central.connections.contains(old))

        try await new.disconnect()
        await fixture.close()
    }
}
