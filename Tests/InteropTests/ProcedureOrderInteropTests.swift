import Bluewire
import BluewireCore
import BluewireHCI
import Testing

/// Controller procedures asked for back to back run in the order asked, against bumble's
/// controller: a stop right after a start leaves the controller stopped, and the next start works.
/// (Before procedures were queued, `scan()` sent its commands from a task that could start after
/// `stopScan()`'s: Scan Disable, Set Scan Parameters, Scan Enable went on the wire in that order and
/// the controller kept scanning while the host said it was not.)
extension ScanInteropTests {
    /// Whether the controller scans after `commands`; nil if Set Scan Parameters came while it
    /// scanned (Command Disallowed, Core Vol 4 Part E §7.8.10).
    static func scanningAfter(_ commands: [(opcode: UInt16, parameters: [UInt8])]) -> Bool? {
        var scanning = false
        for command in commands {
            switch command.opcode {
            case 0x200B, 0x2041: if scanning { return nil }
            case 0x200C, 0x2042: scanning = command.parameters.first == 1
            default: break
            }
        }
        return scanning
    }

    @Test("scan() then stopScan() at once: the controller ends up not scanning and the next scan finds the advertiser")
    func scanThenStopAtOnce() async throws {
        try await withScanningHost(.tcp) { underTest, peer in
            let host = underTest.host
            for _ in 0..<3 {
                let stream = await host.scan()
                await host.stopScan()
                var iterator = stream.makeAsyncIterator()
                _ = try await iterator.next()  // finished: nothing or what came before the stop
                #expect(await host.scanState == .initial)
            }
            // Replays the controller's scan state from the wire: parameters only while not
            // scanning, and not scanning at the end (a stop may also overtake its start entirely).
            #expect(Self.scanningAfter(underTest.counter.sentCommands) == false)
            // Set Scan Parameters while the controller scans would be Command Disallowed (§7.8.10):
            // a scan started now works, so the controller really stopped.
            let device = try await underTest.find(peer.peripheralAddress)
            #expect(device != nil, "the advertiser is found after the stopped scans")
            #expect(Self.scanningAfter(underTest.counter.sentCommands) == false)
        }
    }

    @Test("connect() then cancelConnectionAttempt() at once, during a scan: the attempt fails as cancelled and the next connect works",
          arguments: [0, 1, 5])
    func connectThenCancelAtOnce(yields: Int) async throws {
        try await withScanningHost(.tcp) { underTest, peer in
            let host = underTest.host
            let target = try peer.peripheralAddress
            // What start() sent (its clearing of leftovers includes a Create Connection Cancel) is not this test's.
            let started = underTest.counter.sentCommands.count
            let stream = await host.scan()
            var iterator = stream.makeAsyncIterator()
            _ = try await iterator.next()
            // Nobody advertises at this address: only a cancel ends the attempt.
            let absent = BluetoothAddress(value: 0xC0FFEE000001, type: .random)
            let attempt = Task { try await host.connect(to: absent, timeout: .seconds(20)) }
            // The attempt exists from the moment connect() runs; cancel it at once, or a few
            // scheduling turns later (while the scan stops, or once LE Create Connection is out).
            while await !host.isConnecting { await Task.yield() }
            for _ in 0..<yields { await Task.yield() }
            await host.cancelConnectionAttempt()
            let outcome = await attempt.result
            if case .failure(HostError.connectionFailed(_, let status)) = outcome {
                #expect(status == .operationCancelledByHost)
            } else {
                Issue.record("expected the attempt to be cancelled, got \(outcome)")
            }
            // The attempt ends as cancelled at once, but its LE Create Connection Cancel is queued
            // behind its LE Create Connection (after that one's Command Status), and what the engine
            // sends reaches the transport from the host's writer task: neither is on the wire yet
            // when `attempt.result` returns. The next connect's LE Create Connection is queued behind
            // both, so once that connect succeeded, everything before its create has been sent.
            let connection = try await host.connect(to: target, timeout: .seconds(10))
            #expect(await connection.isConnected)
            let commands = underTest.counter.sentCommands.dropFirst(started).map(\.opcode)
            let allCreates = commands.indices.filter { commands[$0] == 0x200D || commands[$0] == 0x2043 }
            let next = try #require(allCreates.last, "the next connect's LE Create Connection is on the wire")
            let creates = allCreates.filter { $0 < next }
            let cancels = commands.indices.filter { commands[$0] == 0x200E && $0 < next }
            // Either the create never went out, or it went out before its cancel.
            if let create = creates.first {
                #expect(cancels.contains { $0 > create }, "LE Create Connection Cancel after LE Create Connection")
            }
            #expect(!cancels.contains { cancel in !creates.contains { $0 < cancel } }, "no cancel before any create")
            try await host.disconnect(handle: connection.handle)
        }
    }

    @Test("startAdvertising() then stopAdvertising() at once: the last advertising enable on the wire is a disable")
    func advertiseThenStopAtOnce() async throws {
        try await withScanningHost(.tcp) { underTest, _ in
            let host = underTest.host
            // After start() and its clearing of leftovers (an advertising disable of its own).
            let started = underTest.counter.sentCommands.count
            for _ in 0..<3 {
                try await host.startAdvertising(Advertisement(name: "Bluewire-race"))
                try await host.stopAdvertising()
                #expect(await !host.isAdvertising)
            }
            let enables = underTest.counter.sentCommands.dropFirst(started)
                .filter { $0.opcode == 0x200A || $0.opcode == 0x2039 }.compactMap(\.parameters.first)
            #expect(enables.count == 6)
            #expect(enables.last == 0)
        }
    }
}
