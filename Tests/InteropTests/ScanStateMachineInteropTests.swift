import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import Synchronization
import Testing

/// Collects the scan state machine's transitions (the observer runs on the host's executor).
final class ScanTransitionLog: Sendable {
    private let entries = Mutex<[ConnectionTransition]>([])

    var observer: @Sendable (ConnectionTransition) -> Void {
        { [self] transition in self.entries.withLock { $0.append(transition) } }
    }

    var transitions: [ConnectionTransition] { entries.withLock { $0 } }

    /// `Disconnected.Initial -StartScan-> Disconnected.Scanning`, ... with DeviceFound self-loops collapsed.
    var path: [String] {
        var result: [String] = []
        for transition in transitions {
            let step = "\(transition.from) -\(transition.trigger)-> \(transition.to)"
            if result.last != step { result.append(step) }
        }
        return result
    }
}

extension ScanInteropTests {
    @Test("scan path: Initial → Scanning (StartScan), DeviceFound, → Initial on StopScan")
    func scanPathStopScanReturnsToInitial() async throws {
        try await withScanningHost(.tcp) { underTest, peer in
            let address = try peer.peripheralAddress
            let log = ScanTransitionLog()
            #expect(await underTest.host.scanState == .initial)
            var found = false
            for try await device in await underTest.host.scan(duration: .seconds(6), onTransition: log.observer)
            where device.address.value == address.value {
                #expect(await underTest.host.scanState == .disconnected(.scanning))
                found = true
                await underTest.host.stopScan()
            }
            #expect(found)
            #expect(await underTest.host.scanState == .initial)
            #expect(log.path == [
                "Disconnected.Initial -StartScan-> Disconnected.Scanning",
                "Disconnected.Scanning -DeviceFound-> Disconnected.Scanning",
                "Disconnected.Scanning -StopScan-> Disconnected.Initial",
            ])
        }
    }

    @Test("scan path: Initial → Scanning → Initial on ScanCompleted when the duration ends")
    func scanPathDurationEndsWithScanCompleted() async throws {
        // The host runs on a TestClock: the duration ends when the test moves virtual time to it,
        // after bumble's advertising has been seen (event order, no wall-clock duration).
        let clock = TestClock()
        try await withScanningHost(.tcp, clock: clock) { underTest, _ in
            let log = ScanTransitionLog()
            var devices = 0
            var iterator = await underTest.host.scan(duration: .milliseconds(800), onTransition: log.observer).makeAsyncIterator()
            if try await iterator.next() != nil { devices += 1 }
            #expect(devices >= 1, "bumble's advertiser was not seen")
            await clock.advance(by: .milliseconds(799))
            #expect(await underTest.host.scanState == .disconnected(.scanning), "1 ms before the duration the scan still runs")
            await clock.advance(by: .milliseconds(1))
            while try await iterator.next() != nil { devices += 1 }
            #expect(await underTest.host.scanState == .initial)
            #expect(log.transitions.first?.trigger == .startScan)
            #expect(log.transitions.last.map { "\($0.from) -\($0.trigger)-> \($0.to)" }
                    == "Disconnected.Scanning -ScanCompleted-> Disconnected.Initial")
            #expect(!log.transitions.contains { $0.trigger == .stopScan })
        }
    }
}
