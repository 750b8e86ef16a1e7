import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
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
        try await withScanningHost(.tcp) { underTest, _ in
            let log = ScanTransitionLog()
            let started = ContinuousClock.now
            var devices = 0
            for try await _ in await underTest.host.scan(duration: .milliseconds(800), onTransition: log.observer) { devices += 1 }
            let elapsed = ContinuousClock.now - started
            #expect(devices >= 1, "bumble's advertiser was not seen")
            #expect(elapsed >= .milliseconds(800) && elapsed < .seconds(5), "the scan ended after \(elapsed)")
            #expect(await underTest.host.scanState == .initial)
            #expect(log.transitions.first?.trigger == .startScan)
            #expect(log.transitions.last.map { "\($0.from) -\($0.trigger)-> \($0.to)" }
                    == "Disconnected.Scanning -ScanCompleted-> Disconnected.Initial")
            #expect(!log.transitions.contains { $0.trigger == .stopScan })
        }
    }
}
