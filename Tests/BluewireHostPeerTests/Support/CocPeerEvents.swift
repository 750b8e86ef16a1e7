import Foundation
import PeerTestSupport
import Synchronization

/// The EVENT lines of a running bumble_coc.py, parsed, kept for waiting on.
final class CocPeerEvents: Sendable {
    final class Lines: Sendable { let mutex = Mutex<[[String: any Sendable]]>([]) }
    let lines = Lines()
    let task: Task<Void, Never>

    init(_ peer: BumblePeer) {
        let stream = peer.events
        let lines = self.lines
        task = Task {
            for await line in stream {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
                let sendable = object.compactMapValues { value -> (any Sendable)? in
                    switch value {
                    case let number as Int: number
                    case let text as String: text
                    default: nil
                    }
                }
                lines.mutex.withLock { $0.append(sendable) }
            }
        }
    }

    deinit { task.cancel() }

    /// Waits (up to `timeout`) for an event `matching`; returns it, or nil on timeout.
    func wait(
        timeout: Duration = .seconds(20), _ matching: @Sendable ([String: any Sendable]) -> Bool
    ) async -> [String: any Sendable]? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let found = lines.mutex.withLock({ $0.last(where: matching) }) { return found }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// The hex of every {"sdu": HEX} so far, in order.
    var sdus: [String] { lines.mutex.withLock { $0.compactMap { $0["sdu"] as? String } } }
}

func cocHex(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}
