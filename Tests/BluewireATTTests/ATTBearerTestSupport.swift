import BluewireCore

@testable import BluewireATT

/// Splits a bearer's outputs into the PDUs it sent and the events it raised, keeping order within each.
func drain(_ bearer: inout ATTBearer) -> (sent: [[UInt8]], events: [ATTBearerEvent]) {
    var sent: [[UInt8]] = []
    var events: [ATTBearerEvent] = []
    for output in bearer.takeOutputs() {
        switch output {
        case .send(let bytes): sent.append(bytes)
        case .event(let event): events.append(event)
        }
    }
    return (sent, events)
}

func at(seconds: Int64, plus microseconds: Int64 = 0) -> MonotonicInstant {
    MonotonicInstant(microseconds: seconds * 1_000_000 + microseconds)
}
