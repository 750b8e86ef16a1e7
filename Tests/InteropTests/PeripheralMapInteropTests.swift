import Bluewire
import BluewireCore
import ExampleSupport
import Foundation
import Testing
import PeerTestSupport

/// `PeripheralMap` on a real link: a Host in this process maps three magic8ball-peripheral
/// processes, each on its own bumble controller.
@Suite("Peripheral map (bumble)")
struct PeripheralMapInteropTests {
    /// Three balls on a link with the host under test on the fourth controller.
    func withThreeBalls(
        _ body: (BluetoothHost, [BluetoothAddress], [PeripheralProcess]) async throws -> Void
    ) async throws {
        let addresses = (0..<3).map { _ in newStaticAddress() }
        try await withBumblePeer([.tcp, .tcp, .tcp, .tcp], arguments: []) { peer in
            var balls: [PeripheralProcess] = []
            defer { for ball in balls { ball.stop() } }
            for (index, address) in addresses.enumerated() {
                let ball = try PeripheralProcess("magic8ball-peripheral", [
                    "--transport", peer.transports[index], "--own-address", address.hexString, "--name", "Ball \(index)",
                ])
                balls.append(ball)
                try await ball.first("ball \(index) to be ready") { $0.hasPrefix("Ball \(index) ready as \(address)") }
            }
            let host = try await startHost(on: peer.transports[3], address: newStaticAddress())
            do {
                try await body(host, addresses, balls)
            } catch {
                await host.close()
                throw error
            }
            await host.close()
        }
    }

    static let options = PeripheralMap.Options(
        filter: AdvertisingFilter(serviceUUIDs: [Magic8BallProfile.service]), limit: 3, scanDuration: .seconds(30),
        services: [Magic8BallProfile.service])

    @Test func everyBallBecomesReadyAndOneThatHangsUpIsReportedWhileTheOthersStayReady() async throws {
        try await withThreeBalls { host, addresses, balls in
            let map = await host.mapPeripherals(Self.options)
            let log = EventLog(map.events.map { Recorded($0) })
            try await log.wait(for: 3, within: .seconds(60), "three ready entries") { $0.kind == "ready" }
            let events = await log.events
            // The order of one pass: every discovery, the end of the scan, then per entry connecting
            // before ready; never a failure.
            let scanEnd = try #require(events.firstIndex { $0.kind == "scanFinished" })
            #expect(events[..<scanEnd].allSatisfy { $0.kind == "discovered" } && scanEnd == 3, "\(events)")
            #expect(Set(events[scanEnd].found) == Set(addresses))
            for address in addresses {
                let connecting = try #require(events.firstIndex { $0.kind == "connecting" && $0.address == address })
                let ready = try #require(events.firstIndex { $0.kind == "ready" && $0.address == address })
                #expect(scanEnd < connecting && connecting < ready, "\(events)")
            }
            #expect(!events.contains { $0.kind == "failed" || $0.kind == "disconnected" }, "\(events)")
            let entries = await map.entries
            #expect(entries.map(\.address) == events[scanEnd].found)
            for entry in entries {
                #expect(entry.state == .ready)
                #expect(entry.mtu > 23, "the MTU was exchanged")
                #expect(entry.name?.hasPrefix("Ball ") == true)
                #expect(throws: PeripheralMapError.self) { try entry.characteristic(ChatRoomProfile.message) }
            }

            // Ball 1 stops: it disconnects (Remote User Terminated Connection) and the map says so.
            balls[1].send(signal: SIGINT)
            let gone = try await log.first(within: .seconds(30), "the disconnection") { $0.kind == "disconnected" }
            #expect(gone.address == addresses[1])
            #expect(gone.reason == .remoteUserTerminatedConnection)
            #expect(await map[addresses[1]]?.state == .disconnected(.remoteUserTerminatedConnection))
            // The others stay ready, and their proxies still work: ask each a question.
            for address in [addresses[0], addresses[2]] {
                let entry = try #require(await map[address])
                #expect(entry.state == .ready)
                let answers = try await entry.characteristic(Magic8BallProfile.answer).subscribe()
                let question = Array("Still there, \(address)?".utf8)
                try await entry.characteristic(Magic8BallProfile.question).write(question)
                var iterator = answers.makeAsyncIterator()
                let answer = try #require(try await iterator.next())
                #expect(Array(answer.value) == Array(Magic8BallProfile.answer(to: question).utf8))
                #expect(try await entry.characteristic(Magic8BallProfile.answer).read() == Array(answer.value))
            }
            // The stopped ball's proxies fail with the disconnection reason.
            let lost = try #require(await map[addresses[1]])
            await #expect(throws: GATTError.disconnected(.remoteUserTerminatedConnection)) {
                try await lost.characteristic(Magic8BallProfile.answer).read()
            }
            #expect(await log.events.filter { $0.kind == "disconnected" }.count == 1)
            await map.close()
            #expect(await host.connections.isEmpty)
        }
    }

    @Test func aBallWithoutTheRequiredServiceFailsAndTheOthersAreReady() async throws {
        try await withThreeBalls { host, addresses, _ in
            // Chat room service required too: no ball has it, so each fails, after connecting.
            var options = Self.options
            options.services = [Magic8BallProfile.service, ChatRoomProfile.service]
            let map = await host.mapPeripherals(options)
            let log = EventLog(map.events.map { Recorded($0) })
            let failed = try await log.wait(for: 3, within: .seconds(60), "three failures") { $0.kind == "failed" }
            #expect(Set(failed.map(\.address)) == Set(addresses))
            #expect(failed.allSatisfy { $0.error?.contains("has no service") == true }, "\(failed)")
            #expect(await map.ready.isEmpty)
            await #expect(throws: PeripheralMapError.self) { try await map.start() }
            await map.close()
        }
    }
}

extension PeripheralMapInteropTests {
    /// Addresses given instead of a scan: `scanFinished` names them first; a ball there becomes
    /// ready, an address nobody advertises from fails with the connect timeout, and the ball after it
    /// still connects (one failed attempt does not stop the pass).
    @Test func givenAddressesConnectInOrderAndOneNobodyHasFails() async throws {
        try await withThreeBalls { host, addresses, _ in
            let nobody = newStaticAddress()
            var options = Self.options
            options.connectTimeout = .seconds(2)
            let map = PeripheralMap(host: host, options: options)
            let log = EventLog(map.events.map { Recorded($0) })
            try await map.start(addresses: [addresses[0], nobody, addresses[2], addresses[0]])
            try await log.wait(for: 2, within: .seconds(60), "two ready entries") { $0.kind == "ready" }
            let failed = try await log.first(within: .seconds(30), "the failed attempt") { $0.kind == "failed" }
            #expect(failed.address == nobody)
            #expect(failed.error == "\(PeripheralMapError.connect(nobody, .connectionTimeout))", "\(failed)")
            let events = await log.events
            #expect(events.first?.kind == "scanFinished")
            #expect(events.first?.found == [addresses[0], nobody, addresses[2]], "a repeated address maps once")
            #expect(!events.contains { $0.kind == "discovered" }, "nothing was scanned")
            // Connections go one at a time, in the order given.
            let connecting = events.filter { $0.kind == "connecting" }.compactMap(\.address)
            #expect(connecting == [addresses[0], nobody, addresses[2]])
            let failedIndex = try #require(events.firstIndex { $0.kind == "failed" })
            let lastConnecting = try #require(events.firstIndex { $0.kind == "connecting" && $0.address == addresses[2] })
            #expect(failedIndex < lastConnecting, "\(events)")
            #expect(await map[nobody]?.state == .failed)
            #expect(await map.ready.map(\.address) == [addresses[0], addresses[2]])
            await map.close()
        }
    }
}

/// A map event, flattened for order checks.
struct Recorded: Sendable, CustomStringConvertible {
    var kind: String
    var address: BluetoothAddress?
    var found: [BluetoothAddress] = []
    var reason: HCIStatus?
    var error: String?

    init(_ event: PeripheralMapEvent) {
        switch event {
        case .discovered(let device): kind = "discovered"; address = device.address
        case .scanFinished(let found, let error): kind = "scanFinished"; self.found = found; self.error = error.map { "\($0)" }
        case .connecting(let address): kind = "connecting"; self.address = address
        case .ready(let entry): kind = "ready"; address = entry.address
        case .disconnected(let address, let reason): kind = "disconnected"; self.address = address; self.reason = reason
        case .failed(let address, let error): kind = "failed"; self.address = address; self.error = "\(error)"
        }
    }

    var description: String { "\(kind) \(address.map { "\($0)" } ?? "") \(error ?? "")" }
}
