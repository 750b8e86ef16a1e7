import Foundation
import HostTestSupport
import Testing

/// `bluewire gatt` against a peripheral whose ATT server stops answering: the recorded session
/// (`Captures/bluewire_gatt_cli_mtu_timeout.btsnoop`, bumble's peripheral with `--silent-on 02`, so its
/// Exchange MTU Request is never answered) replayed, its 30 s transaction timeout elapsing in capture time.
@Suite("bluewire replay -- gatt: a peripheral that stops answering")
struct ReplayGATTTimeoutCommandTests {
    static let capture = ReplayFixtures.captures.appendingPathComponent("bluewire_gatt_cli_mtu_timeout.btsnoop").path

    @Test("an unanswered Exchange MTU Request fails the command with the transaction timeout, not the refusal of the discovery after it")
    func unansweredExchangeNamesTheTimeout() async throws {
        let run = try await ReplayServeCommandTests.start([
            "replay", Self.capture, "--", "gatt", "read", "C7:E8:93:71:EE:42/random", "0x0003", "--own-address", "C4:5A:17:00:B2:07",
        ]).finish(.seconds(60))
        #expect(run.status == 1)
        #expect(run.stdout.isEmpty)
        // One line, naming the timeout (Core Vol 3 Part F §3.3.3); the session ran to its recorded end.
        #expect(run.stderr == "bluewire: C7:E8:93:71:EE:42/random: no ATT response within 30 s "
            + "(transaction timeout, Core Vol 3 Part F §3.3.3): the link was dropped\n", "stderr: \(run.stderr)")
    }
}
