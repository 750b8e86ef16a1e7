import BluewireHCI
import BluewireTransport

extension EngineHost {
    /// Why bring-up (`.start`) failed with `.notRunning` when the controller's byte stream failed
    /// under it, in words: what the controller did (closed the stream, sent bytes that are not H4
    /// such as an unknown packet type, or a packet cut short) and the bring-up command left
    /// unanswered. Nil while the transport is fine.
    public var bringUpStreamFailure: String? {
        guard let failure = transportFailure else { return nil }
        let what: String
        switch failure {
        case .closed: what = "the controller closed its stream (end of file)"
        case .framing(let framing): what = "the controller sent bytes that are not HCI packets (\(framing))"
        default: what = "the controller's transport failed: \(failure)"
        }
        guard let unanswered = engine.bringUpCommandAwaitingAnswer else { return what }
        return "\(what) while \(unanswered) was unanswered"
    }
}
