@_spi(Testing) import Bluewire
import BluewireCore
import Synchronization
import Testing

/// `HostDiagnostics.liveGATTSessions` counts sessions still allocated. One held by the application
/// past its link's end is freed when the application lets go, with no packet and no drain; the
/// session's release makes its host re-check what waits on its counts, so a wait for the count wakes
/// then and a bench's `expectNothingLeaks` needs no poll.
@Suite("A GATT client session's release")
struct GATTSessionReleaseWaitTests {
    /// The application's reference to a link's GATT client, dropped on cue.
    final class Holder: Sendable {
        private let client: Mutex<GATTClient?>
        init(_ client: GATTClient) { self.client = Mutex(client) }
        func release() { client.withLock { $0 = nil } }
    }

    @Test("a session held past its link's end: its release alone wakes a wait on the live-session count")
    func releaseWakesDiagnosticsWaiters() async throws {
        let bench = try await FaultBench.make()
        let connection = try await bench.connect()
        let holder = Holder(await connection.gatt)
        try await connection.disconnect()
        try await bench.settleQuiet("the link is gone on both sides") {
            let c = await bench.central.diagnostics
            return c.links == 0 && c.holdsNoConnectionState
        }
        // Only the holder keeps the session now, and nothing moves: the wait below finds one live
        // session, sleeps on the bench's signal, and only the release can wake it.
        #expect(await bench.central.diagnostics.liveGATTSessions == 1)
        let freed = Task {
            try await settle("the released session is no longer counted", on: bench.signal) {
                await bench.central.diagnostics.liveGATTSessions == 0
            }
        }
        await bench.signal.waitForWaiter()
        holder.release()
        try await freed.value
        await bench.close()
    }
}
