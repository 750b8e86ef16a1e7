import BluewireCore
@testable import BluewireL2CAP

/// Two channel managers wired to each other in process, like two hosts on one link: every frame one
/// sends is delivered to the other by `run()`, deterministically, until both are quiet.
struct CreditBasedPair {
    var central = CreditBasedChannelManager(role: .central)
    var peripheral = CreditBasedChannelManager(role: .peripheral)
    var now = MonotonicInstant.zero
    var centralEvents: [CreditBasedChannelEvent] = []
    var peripheralEvents: [CreditBasedChannelEvent] = []
    /// Every frame sent, in order: (from central?, frame).
    var wire: [(fromCentral: Bool, frame: L2CAPBasicFrame)] = []
    /// Whether to drop frames instead of delivering them (to test timeouts).
    var dropping = false

    /// Delivers frames until neither side has anything to send.
    mutating func run() {
        var busy = true
        while busy {
            busy = false
            for output in central.takeOutputs() {
                busy = true
                switch output {
                case .send(let frame):
                    wire.append((true, frame))
                    if !dropping { peripheral.receive(channelID: frame.channelID, payload: frame.payload, now: now) }
                case .event(let event): centralEvents.append(event)
                }
            }
            for output in peripheral.takeOutputs() {
                busy = true
                switch output {
                case .send(let frame):
                    wire.append((false, frame))
                    if !dropping { central.receive(channelID: frame.channelID, payload: frame.payload, now: now) }
                case .event(let event): peripheralEvents.append(event)
                }
            }
        }
    }

    /// Reads every SDU waiting on `cid` of `side` (delivering the credits it returns).
    mutating func drain(central side: Bool, _ cid: UInt16) -> [[UInt8]] {
        var out: [[UInt8]] = []
        while true {
            let sdu = side ? central.readSDU(on: cid) : peripheral.readSDU(on: cid)
            guard let sdu else { break }
            out.append(sdu)
            run()
        }
        return out
    }
}

extension Array where Element == CreditBasedChannelEvent {
    var connected: [UInt16] {
        compactMap { if case .connected(let cid, _, _) = $0 { return cid } else { return nil } }
    }
    var failures: [CreditBasedConnectionFailure] {
        compactMap { if case .connectionFailed(_, _, let reason) = $0 { return reason } else { return nil } }
    }
    var disconnections: [CreditBasedDisconnectReason] {
        compactMap { if case .disconnected(_, let reason) = $0 { return reason } else { return nil } }
    }
}

/// Deterministic pseudo-random bytes (xorshift), so a failure reproduces.
struct TestBytes {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) } }
}
