import Bluewire
import BluewireCore
import BluewireGATT
import BluewireTransport
import Foundation
import HostTestSupport
import PeerTestSupport
import Testing

/// `Connection` values on the peripheral side against bumble centrals (Tests/Peers/bumble_link.py
/// `--central --centrals 2 --manual`): bumble's controller gives a new link the lowest free handle,
/// so the second central's link gets the first one's handle, and the first link's `Connection` must
/// then be refused rather than reach the second central (Core Vol 4 Part E §7.7.65.1).
@Suite("Peripheral: Connection values against bumble centrals", .serialized)
struct PeripheralConnectionValueBumbleTests {
    /// Sends a JSON command to a bumble central.
    static func command(_ peer: BumblePeer, _ central: Int, _ op: String, _ extra: String = "") {
        peer.send(line: "{\"central\": \(central), \"op\": \"\(op)\"\(extra)}")
    }

    /// The hex values of the notifications central `index` has received so far, in order.
    static func notifications(_ events: CocPeerEvents, central index: Int) -> [String] {
        events.lines.mutex.withLock { lines in
            lines.filter { $0["central"] as? Int == index && $0["notification"] != nil }.compactMap { $0["value"] as? String }
        }
    }

    @Test("bumble: notify, indicate and serverState take the Connection of a central; after it disconnects and a second central's link gets its handle, they refuse it and the second central gets nothing meant for the first")
    func staleConnectionAgainstBumble() async throws {
        let address = BluetoothAddress.randomStatic(UInt64.random(in: 0...0x3FFF_FFFF_FFFF))
        let arguments = ["--central", address.hexString, "--centrals", "2", "--manual"]
        try await withBumblePeer([.tcp], arguments: arguments) { peer in
            let peerEvents = CocPeerEvents(peer)
            let host = BluetoothHost(
                transport: try await TransportSpec(parsing: peer.transports[0]).open(),
                configuration: HostConfiguration(randomAddress: address, commandTimeout: .seconds(10)))
            try await host.start()
            let served = try ConnectionValueDatabase()
            let events = PeripheralEventRecorder(await host.peripheralEvents())
            await host.setDatabase(served.database)
            try await host.startAdvertising(try Advertisement(name: "Stale"))
            do {
                try await run(peer, peerEvents, host, served, events)
            } catch {
                await host.close()
                throw error
            }
            await host.close()
        }
    }

    func run(
        _ peer: BumblePeer, _ peerEvents: CocPeerEvents, _ host: BluetoothHost,
        _ served: ConnectionValueDatabase, _ events: PeripheralEventRecorder
    ) async throws {
        let isConnected: @Sendable (PeripheralEvent) -> Bool = { if case .connected = $0 { true } else { false } }
        let isSubscription: @Sendable (PeripheralEvent) -> Bool = { if case .subscriptionChanged = $0 { true } else { false } }
        // Central 0 connects, discovers, and subscribes to both characteristics (notifications and indications).
        Self.command(peer, 0, "connect", ", \"discover\": true")
        try await events.wait(for: 2, within: .seconds(60), "central 0's subscriptions", where: isSubscription)
        let connected = await events.events.compactMap { event -> Bluewire.Connection? in
            if case .connected(let connection) = event { connection } else { nil }
        }
        let link = try #require(connected.first)
        #expect(await host.connection(handle: link.handle) == link)

        #expect(try await host.notify(served.notifying, value: [0xA1], to: link))
        #expect(try await host.indicate(served.indicating, value: [0xA2], to: link) == IndicationOutcome(confirmed: [link.handle]))
        let state = try await host.serverState(for: link)
        #expect(state.subscriptions == 2 && !state.indicationOutstanding)
        #expect(await peerEvents.wait { $0["central"] as? Int == 0 && $0["value"] as? String == "a1" } != nil, "central 0 got the notification")

        // Central 0 disconnects; central 1 connects and gets the same handle from bumble's controller.
        Self.command(peer, 0, "disconnect")
        try await events.wait(for: 1, within: .seconds(60), "central 0's disconnection") { if case .disconnected = $0 { true } else { false } }
        #expect(await host.connection(handle: link.handle) == nil)
        await #expect(throws: StaleConnectionError.self) { try await host.serverState(for: link) }
        Self.command(peer, 1, "connect", ", \"discover\": true")
        try await events.wait(for: 4, within: .seconds(60), "central 1's subscriptions", where: isSubscription)
        try await events.wait(for: 2, "central 1's connection", where: isConnected)
        let newLink = try #require(await events.events.compactMap { event -> Bluewire.Connection? in
            if case .connected(let connection) = event { connection } else { nil }
        }.last)
        try #require(newLink.handle == link.handle, "bumble's controller gives the lowest free handle")
        #expect(newLink.peer != link.peer)

        let reused = StaleConnectionError(connection: link, reason: .handleReused(by: newLink.peer))
        do {
            try await host.notify(served.notifying, value: [0xEE], to: link)
            Issue.record("notify reached a stale Connection")
        } catch {
            guard case .staleConnection(let stale) = error else { throw error }
            #expect(stale == reused)
        }
        do {
            _ = try await host.indicate(served.indicating, value: [0xEE], to: link)
            Issue.record("indicate reached a stale Connection")
        } catch {
            guard case .staleConnection(let stale) = error else { throw error }
            #expect(stale == reused)
        }
        await #expect(throws: reused) { try await host.serverState(for: link) }
        await #expect(throws: reused) { try await host.queuedACLPackets(of: link) }
        await #expect(throws: reused) { try await host.waitForACLQueue(of: link, atMost: 0) }
        await #expect(throws: reused) { try await host.streamSequencedNotifications(served.notifying, to: link, limit: 1) }

        // The new link's own Connection works, and nothing refused reached central 1: on one link
        // notifications arrive in order, so its first one is the one sent to it.
        #expect(try await host.notify(served.notifying, value: [0xB1], to: newLink))
        #expect(await peerEvents.wait { $0["central"] as? Int == 1 && $0["value"] as? String == "b1" } != nil, "central 1 got its notification")
        #expect(Self.notifications(peerEvents, central: 1) == ["b1"])
        #expect(try await host.indicate(served.indicating, value: [0xB2], to: newLink) == IndicationOutcome(confirmed: [newLink.handle]))
        Self.command(peer, 1, "disconnect")
        try await events.wait(for: 2, within: .seconds(60), "central 1's disconnection") { if case .disconnected = $0 { true } else { false } }
    }
}
