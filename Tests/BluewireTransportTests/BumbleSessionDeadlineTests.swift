import BluewireCore
import Foundation
import Testing

@testable import BluewireTransport
import PeerTestSupport

/// The test harness's own guard against a hung peer session (Docs/Testing.md): past its deadline
/// `withBumblePeer` kills the peer, so a test blocked on it unwinds through the transport's
/// end-of-stream path and the session fails by name instead of hanging the whole run.
@Suite("bumble session deadline")
struct BumbleSessionDeadlineTests {
    @Test("a session still waiting at its deadline: the peer is killed, the wait ends, the session fails by name")
    func deadlineKillsPeerAndFailsSession() async throws {
        var packetsBeforeEnd = -1
        do {
            try await withBumblePeer([.tcp], deadline: .seconds(2)) { peer in
                let transport = try await TransportSpec(parsing: peer.transports[0]).open()
                // Nothing is ever sent, so the controller says nothing: only the peer's death ends this.
                var count = 0
                do {
                    for try await _ in transport.inbound { count += 1 }
                } catch {}
                packetsBeforeEnd = count
                await transport.close()
            }
            Issue.record("the session outlived its deadline and still succeeded")
        } catch let error as SessionDeadlineExceeded {
            #expect(error.deadline == .seconds(2))
            #expect(error.description.contains("bumble_link.py"))
        }
        #expect(packetsBeforeEnd == 0, "the wait ended when the peer's socket closed")
    }
}
