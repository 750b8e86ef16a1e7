import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import Testing
import PeerTestSupport

func isConnected(_ event: PeripheralEvent) -> Bool {
    if case .connected = event { true } else { false }
}

func isAdvertisingStarted(_ event: PeripheralEvent) -> Bool {
    if case .advertisingStarted = event { true } else { false }
}

/// Advertising in the peripheral role, against bumble centrals and a Bluewire scanner on the same
/// bumble link.
@Suite("Peripheral: advertising against bumble")
struct PeripheralAdvertisingInteropTests {
    @Test func aScannerOnTheLinkSeesTheNameAndServicesFromTheRandomStaticAddress() async throws {
        try await withBumblePeer([.tcp, .tcp]) { peer in
            let address = newStaticAddress()
            let peripheral = try await startHost(on: peer.transports[0], address: address)
            let scanner = try await startHost(on: peer.transports[1], address: newStaticAddress())
            let service = BluetoothUUID(0x181C)
            try await peripheral.startAdvertising(Advertisement(name: "Bluewire Peripheral", services: [service]))
            var seen: DiscoveredDevice?
            for try await device in await scanner.scan(filter: AdvertisingFilter(addresses: [address]), duration: .seconds(5)) {
                if device.name != nil { seen = device; break }
            }
            await scanner.stopScan()
            let device = try #require(seen, "the scanner saw no advertisement from \(address)")
            #expect(device.address == address && device.address.type == .random, "own address type random")
            #expect(device.name == "Bluewire Peripheral")
            #expect(device.serviceUUIDs == [service])
            #expect(device.connectable)
            await scanner.close()
            await peripheral.close()
        }
    }

    @Test func advertisingRestartsAfterEachConnectionSoSeveralCentralsConnect() async throws {
        try await withPeripheralLink(centrals: 2, manual: true) { peer, host, peerLog, hostLog in
            await host.setDatabase(try ServerFixture().database)
            try await host.startAdvertising(Advertisement(name: "Bluewire", services: [ServerFixture.service]))
            peer.command(0, "connect", ["discover": false])
            try await hostLog.wait(for: 2, "advertising to restart after the first connection", where: isAdvertisingStarted)
            peer.command(1, "connect", ["discover": false])
            try await hostLog.wait(for: 2, "both centrals", where: isConnected)
            for central in 0..<2 {
                try await peerLog.first("central \(central) connected") { $0.isCentral(central, "connected") }
                peer.command(central, "read", ["handle": 3])
                let read = try await peerLog.first("central \(central)'s read") { $0.isCentral(central, "read") }
                #expect(read["value"]?.string == hexBytes(Array("Bluewire".utf8)), "central \(central): \(read)")
            }
            #expect(await host.connections.count == 2)
            #expect(await host.connections.allSatisfy { $0.role == .peripheral })
        }
    }

    @Test func atTheConnectionLimitAdvertisingWaitsForACentralToDisconnect() async throws {
        try await withPeripheralLink(centrals: 2, manual: true) { peer, host, peerLog, hostLog in
            await host.setDatabase(try ServerFixture().database)
            let advertisement = Advertisement(
                data: [.flags([.leGeneralDiscoverableMode, .brEdrNotSupported]), .completeLocalName("One at a time")],
                maximumConnections: 1)
            try await host.startAdvertising(advertisement)
            peer.command(0, "connect", ["discover": false])
            let connected = try await hostLog.first("the first central", where: isConnected)
            try await hostLog.first("advertising to stop") { $0 == .advertisingStopped }
            #expect(await !host.isAdvertising, "a connection stops connectable advertising; the limit keeps it off")
            #expect(await host.advertisingPlan != nil)

            peer.command(0, "disconnect")
            try await hostLog.first("the disconnection") { if case .disconnected = $0 { true } else { false } }
            try await hostLog.wait(for: 2, "advertising to resume", where: isAdvertisingStarted)
            peer.command(1, "connect", ["discover": false])
            let second = try await hostLog.wait(for: 2, "the second central", where: isConnected)
            guard case .connected(let first) = connected, case .connected(let other) = second[1] else { return }
            #expect(first.peer != other.peer, "the second central is another device")
            #expect(await host.connections.map(\.peer) == [other.peer])
        }
    }

    @Test func extendedAdvertisingCommandsWithExtendedPDUsWhenAskedForAndRestartAfterTheSetTerminates() async throws {
        try await withPeripheralLink(centrals: 2, manual: true) { peer, host, peerLog, hostLog in
            await host.setDatabase(try ServerFixture().database)
            // 48 octets of data: more than legacy PDUs carry.
            let advertisement = Advertisement(
                data: [.flags([.leGeneralDiscoverableMode, .brEdrNotSupported]),
                       .serviceUUIDs([ServerFixture.service], complete: true),
                       .completeLocalName("Extended advertiser")],
                commandSet: .extended)
            let plan = try await host.startAdvertising(advertisement)
            #expect(plan.kind == .extended(legacyPDUs: false))
            #expect(plan.advertisingData.count > AdvertisingPlan.legacyDataLimit)
            peer.command(0, "connect", ["discover": false])
            try await hostLog.wait(for: 2, "the set to be enabled again after Advertising Set Terminated", where: isAdvertisingStarted)
            peer.command(1, "connect", ["discover": false])
            try await hostLog.wait(for: 2, "both centrals", where: isConnected)
            peer.command(1, "read", ["handle": 3])
            let read = try await peerLog.first("central 1's read") { $0.isCentral(1, "read") }
            #expect(read["value"]?.string == hexBytes(Array("Bluewire".utf8)))
        }
    }

    @Test func stopAdvertisingKeepsItOffAfterADisconnection() async throws {
        try await withPeripheralLink(centrals: 1, manual: true) { peer, host, peerLog, hostLog in
            try await host.startAdvertising(Advertisement(name: "Bluewire"))
            peer.command(0, "connect", ["discover": false])
            try await hostLog.wait(for: 2, "advertising to restart", where: isAdvertisingStarted)
            try await host.stopAdvertising()
            #expect(await !host.isAdvertising)
            peer.command(0, "disconnect")
            try await hostLog.first("the disconnection") { if case .disconnected = $0 { true } else { false } }
            // A round trip through the Host's executor after the disconnection: the resume task ran.
            _ = await host.connections
            let plan = await host.advertisingPlan
            #expect(await !host.isAdvertising)
            #expect(plan == nil)
            #expect(await hostLog.events.filter(isAdvertisingStarted).count == 2)
        }
    }
}
