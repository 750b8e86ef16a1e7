import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireSnoop
import BluewireTesting
import BluewireTransport
import Foundation
import HostTestSupport
import Testing

/// A whole central session (bring-up, scan, connect, MTU exchange, GATT dump with long reads,
/// disconnect) that Bluewire recorded against a bumble peripheral, replayed with no bumble running:
/// `Captures/bumble_central_gatt_dump.btsnoop`.
@Suite("Central session replayed from a bumble capture")
struct ReplayCentralSessionTests {
    @Test("the recorded session replays byte-exactly and its dump reads what the peripheral served")
    func sessionReplaysStrictly() async throws {
        let (dump, transport) = try await CentralGATTDumpCapture.replay(ReplayFixtures.captures.appendingPathComponent(CentralGATTDumpCapture.captureName))
        try await transport.verify()
        #expect(await transport.isExhausted)
        CentralGATTDumpCapture.expectServed(dump)
    }

    @Test("two replays of the session produce the same dump")
    func sessionIsDeterministic() async throws {
        let url = ReplayFixtures.captures.appendingPathComponent(CentralGATTDumpCapture.captureName)
        let (first, _) = try await CentralGATTDumpCapture.replay(url)
        let (second, _) = try await CentralGATTDumpCapture.replay(url)
        #expect(first == second)
    }
}
