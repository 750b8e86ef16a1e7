import Bluewire
import BluewireCore
import BluewireGATT
import Testing
import PeerTestSupport

/// Little-endian hex of a handle or offset, as it appears in an ATT PDU.
func le(_ value: UInt16) -> String { hexBytes([UInt8(value & 0xFF), UInt8(value >> 8)]) }

/// A bumble central that sends raw ATT PDUs (bumble_link.py's `att` command) and sees every PDU it
/// gets back; it confirms nothing by itself.
struct RawCentral {
    let peer: BumblePeer
    let log: EventLog<PeerJSON>
    let index: Int

    func received() async -> [String] {
        await log.events.filter { $0.isCentral(index, "att") }.compactMap { $0["att"]?.string }
    }

    /// Sends `pdus` back to back and returns the next `answers` PDUs received (one per PDU by default).
    func exchange(_ pdus: [String], answers: Int? = nil) async throws -> [String] {
        let before = await received().count
        peer.command(index, "att", ["pdus": pdus])
        let index = self.index
        let all = try await log.wait(for: before + (answers ?? pdus.count), "answers to \(pdus.prefix(3))") { $0.isCentral(index, "att") }
        return all.dropFirst(before).compactMap { $0["att"]?.string }
    }

    func exchange(_ pdu: String) async throws -> String? {
        try await exchange([pdu]).first
    }
}

/// A hostile central (malformed PDUs, invalid handles, out-of-range offsets, a flood of Prepare
/// Writes, requests before the MTU exchange, indications never confirmed) beside a well-behaved one,
/// both bumble centrals on one link with the Host as peripheral.
@Suite("Peripheral: a hostile central against the Host's GATT server")
struct PeripheralHostileCentralInteropTests {
    /// Connects central 1 (discovers, reads, subscribes) and central 0 (raw), and returns the Host's
    /// connection handle of each.
    static func connectBoth(
        _ peer: BumblePeer, _ host: BluetoothHost, _ peerLog: EventLog<PeerJSON>, _ hostLog: EventLog<PeripheralEvent>
    ) async throws -> (hostile: UInt16, friendly: UInt16) {
        peer.command(1, "connect", ["discover": true])
        try await peerLog.first("the friendly central's discovery") { $0.isCentral(1, "discovered") }
        peer.command(0, "connect", ["discover": false])
        try await peerLog.first("the hostile central's connection") { $0.isCentral(0, "connected") }
        try await hostLog.wait(for: 2, "both connections", where: isConnected)
        let addresses = try #require(peer.ready.centrals)
        let connections = await host.connections
        let hostile = try #require(connections.first { $0.peer.hexString == addresses[0] }).handle
        let friendly = try #require(connections.first { $0.peer.hexString == addresses[1] }).handle
        return (hostile, friendly)
    }

    @Test func malformedAndInvalidRequestsGetTheRightErrorsBeforeAndAfterTheMTUExchange() async throws {
        let fixture = try ServerFixture()
        try await withPeripheralLink(centrals: 2, manual: true) { peer, host, peerLog, hostLog in
            await host.setDatabase(fixture.database)
            try await host.startAdvertising(Advertisement(name: "Bluewire", services: [ServerFixture.service]))
            let (hostile, friendly) = try await Self.connectBoth(peer, host, peerLog, hostLog)
            let raw = RawCentral(peer: peer, log: peerLog, index: 0)
            let long = fixture.long, writable = fixture.writable
            let cccd = try #require(fixture.database.characteristic(valueHandle: fixture.notifying)?.clientConfigurationHandle)
            let longHex = hexBytes(ServerFixture.longValue)

            let cases: [(String, String, String)] = [
                ("Read Request one octet short", "0a01", "010a000004"),
                ("Read of a handle that does not exist", "0a3412", "010a341201"),
                ("Read of handle 0x0000", "0a0000", "010a000001"),
                ("Read before the MTU exchange: 22 octets", "0a" + le(long), "0b" + String(longHex.prefix(44))),
                ("Read Blob past the end", "0c" + le(long) + le(200), "010c" + le(long) + "07"),
                ("Read Blob exactly at the end", "0c" + le(long) + le(120), "0d"),
                ("Read Blob of a value that has no offset 9000", "0c" + le(writable) + le(9000), "010c" + le(writable) + "07"),
                ("Unknown request", "30", "0130000006"),
                ("Find Information with start > end", "04" + le(5) + le(1), "0104" + le(5) + "01"),
                ("Find Information from handle 0", "040000ffff", "0104000001"),
                ("Read By Group Type of a non-grouping type", "100100ffff0328", "0110010010"),
                ("Write of a read-only value", "12" + le(long) + "00", "0112" + le(long) + "03"),
                ("Write of a handle that does not exist", "12ffff00", "0112ffff01"),
                ("Write Request longer than ATT_MTU 23", "12" + le(writable) + String(repeating: "ab", count: 30), "0112000004"),
                ("CCCD write of one octet", "12" + le(cccd) + "01", "0112" + le(cccd) + "0d"),
                ("Execute Write with reserved flags", "1802", "0118000004"),
            ]
            for (name, request, expected) in cases {
                let answer = try await raw.exchange(request)
                #expect(answer == expected, "\(name): sent \(request)")
            }
            // Commands and client-bound PDUs get no answer: only the Read after them is answered.
            let quiet = try await raw.exchange(["70aabb", "1b" + le(fixture.notifying) + "01", "1e", "52" + le(writable) + "01", "0a" + le(writable)], answers: 1)
            #expect(quiet == ["0b01"], "an unknown command, a notification, a stray confirmation are ignored; the Write Command writes, silently")

            // An MTU below 23 leaves ATT_MTU at 23 (§3.4.2.2); the exchange counts once only.
            #expect(try await raw.exchange("021000") == "03" + le(517))
            #expect(try await raw.exchange("0a" + le(long)) == "0b" + String(longHex.prefix(44)))
            #expect(try await raw.exchange("02f401") == "03" + le(517))
            #expect(try await raw.exchange("0a" + le(long)) == "0b" + String(longHex.prefix(44)), "a second exchange changes nothing")
            #expect(await host.serverState(for: hostile)?.mtu == 23)

            // The other central is served as if nothing happened.
            peer.command(1, "read", ["handle": Int(long)])
            let read = try await peerLog.first("the friendly central's long read") { $0.isCentral(1, "read", Int(long)) }
            #expect(read["value"]?.string == longHex)
            #expect(try await host.notify(fixture.notifying, value: [7]) == [friendly], "only the subscribed central is notified")
            try await peerLog.first("the friendly notification") { $0.isCentral(1, "notification", Int(fixture.notifying)) }
            #expect(await host.serverConnectionCount == 2)
            #expect(await !hostLog.events.contains { if case .disconnected = $0 { true } else { false } }, "nobody was disconnected")
        }
    }

    @Test func aFloodOfPrepareWritesFillsABoundedQueueAndPipelinedRequestsAreAllAnswered() async throws {
        let fixture = try ServerFixture()
        try await withPeripheralLink(centrals: 2, manual: true) { peer, host, peerLog, hostLog in
            await host.setDatabase(fixture.database)
            try await host.startAdvertising(Advertisement(name: "Bluewire", services: [ServerFixture.service]))
            let (hostile, friendly) = try await Self.connectBoth(peer, host, peerLog, hostLog)
            let raw = RawCentral(peer: peer, log: peerLog, index: 0)
            let writable = fixture.writable
            let limit = GATTServerConfiguration().maximumPreparedWrites

            // 80 Prepare Write Requests back to back, without waiting for the answers.
            let flood = (0..<80).map { "16" + le(writable) + le(UInt16($0)) + "aa" }
            let answers = try await raw.exchange(flood)
            #expect(answers.prefix(limit) == flood.prefix(limit).map { "17" + $0.dropFirst(2) }[...], "each queued part echoed")
            #expect(answers.dropFirst(limit).allSatisfy { $0 == "0116" + le(writable) + "09" }, "then Prepare Queue Full")
            let full = try #require(await host.serverState(for: hostile))
            #expect(full.preparedWrites == limit, "the prepare queue stops at its bound")
            #expect(full.bearerPendingRequests == 0 && full.queuedACLPackets == 0)

            // Execute Write with flags 0 cancels: the queue empties and the value is unchanged.
            #expect(try await raw.exchange("1800") == "19")
            #expect(await host.serverState(for: hostile)?.preparedWrites == 0)
            #expect(try await raw.exchange("0a" + le(writable)) == "0b00")

            // 200 pipelined reads: every one answered, nothing left waiting.
            let reads = try await raw.exchange(Array(repeating: "0a" + le(writable), count: 200))
            #expect(reads.count == 200 && reads.allSatisfy { $0 == "0b00" })
            let after = try #require(await host.serverState(for: hostile))
            #expect(after.preparedWrites == 0 && after.queuedIndications == 0 && after.subscriptions == 0)
            #expect(await host.serverState(for: friendly)?.subscriptions == 2)

            peer.command(1, "write", ["handle": Int(writable), "value": "2b"])
            let written = try await peerLog.first("the friendly write") { $0.isCentral(1, "written") }
            #expect(written["error"] == nil)
            #expect(try await raw.exchange("0a" + le(writable)) == "0b2b", "the other central's write is served to everyone")
        }
    }

    @Test func aCentralThatNeverConfirmsGetsOneIndicationAndABoundedQueueWhileTheOtherGetsAll() async throws {
        let fixture = try ServerFixture()
        try await withPeripheralLink(centrals: 2, manual: true) { peer, host, peerLog, hostLog in
            await host.setDatabase(fixture.database)
            try await host.startAdvertising(Advertisement(name: "Bluewire", services: [ServerFixture.service]))
            let (hostile, friendly) = try await Self.connectBoth(peer, host, peerLog, hostLog)
            let raw = RawCentral(peer: peer, log: peerLog, index: 0)
            let indicating = fixture.indicating
            let cccd = try #require(fixture.database.characteristic(valueHandle: indicating)?.clientConfigurationHandle)
            #expect(try await raw.exchange("12" + le(cccd) + "0200") == "13", "the hostile central subscribes to indications")
            let bound = GATTServerConfiguration().maximumQueuedIndications

            let calls = (0..<20).map { index in
                Task { try await host.indicate(indicating, value: [UInt8(index)], to: hostile) }
            }
            try await hostLog.wait(for: 3, "three values dropped for the hostile central") {
                if case .indicationDropped(hostile, indicating) = $0 { true } else { false }
            }
            let waiting = try #require(await host.serverState(for: hostile))
            #expect(waiting.indicationOutstanding && waiting.queuedIndications == bound && waiting.pendingIndicationCalls == bound + 1)
            try await peerLog.first("the first indication at the hostile central") { $0.isCentral(0, "att") && $0["att"]?.string?.hasPrefix("1d") == true }

            // Indicating everyone now: the friendly central confirms at once; the hostile one's full
            // queue drops the value instead of holding the call.
            let everyone = try await host.indicate(indicating, value: [0xEE])
            #expect(everyone == IndicationOutcome(confirmed: [friendly], failed: [hostile: .queueFull]))
            try await peerLog.first("the friendly indication") { $0.isCentral(1, "notification", Int(indicating)) && $0["value"]?.string == "ee" }
            #expect(await raw.received().filter { $0.hasPrefix("1d") }.count == 1, "one indication outstanding at a time")

            // A confirmation settles the first call and releases exactly the next value.
            let next = try await raw.exchange(["1e"])
            #expect(next.count == 1 && next[0].hasPrefix("1d" + le(indicating)))
            #expect(await host.serverState(for: hostile)?.queuedIndications == bound - 1)

            // The hostile central leaves: every call settles, none hangs.
            peer.command(0, "disconnect")
            var confirmed = 0, dropped = 0, lost = 0
            for call in calls {
                let outcome = try await call.value
                if outcome.confirmed.contains(hostile) { confirmed += 1 }
                switch outcome.failed[hostile] {
                case .queueFull?: dropped += 1
                case .disconnected?: lost += 1
                default: break
                }
            }
            #expect((confirmed, dropped, lost) == (1, 3, 16), "one confirmed, three dropped, the one in flight and the fifteen queued lost")
            #expect(await host.serverConnectionCount == 1)
            #expect(await host.serverState(for: hostile) == nil)
        }
    }
}
