import BluewireATT

/// What a GATT client procedure wants next: send this request and give me its answer, or it is done.
public enum GATTProcedureStep<Output> {
    /// Send this request PDU and feed its response (or Error Response) to `receive(_:)`.
    case request(ATTPDU)
    /// The procedure has finished with this result.
    case finished(Output)
}

extension GATTProcedureStep: Sendable where Output: Sendable {}
extension GATTProcedureStep: Equatable where Output: Equatable {}

/// A GATT client procedure (Core Vol 3 Part G §4) as a sans-I/O state machine: it emits ATT requests
/// one at a time and consumes their responses, never more than one outstanding (Vol 3 Part F §3.3.2).
///
/// A driver calls `start()`, then, while the step is `.request(pdu)`, sends `pdu` and passes the answer
/// to `receive(_:)`. Error Responses become `GATTClientError.errorResponse`, except where the procedure
/// defines them as its normal end (Attribute Not Found ends discovery, §4.4.1).
public protocol GATTClientProcedure {
    associatedtype Output

    /// The first step. Fails only on invalid arguments (an empty handle range, a value too long).
    mutating func start() throws(GATTClientError) -> GATTProcedureStep<Output>

    /// Consumes the answer to the last request and returns the next step.
    mutating func receive(_ response: ATTPDU) throws(GATTClientError) -> GATTProcedureStep<Output>
}

/// The handle range a procedure searches. Core Vol 3 Part F §3.4.3.1: the starting handle must be
/// non-zero and not greater than the ending handle, else the server answers Invalid Handle.
@usableFromInline
func validateRange(_ start: UInt16, _ end: UInt16) throws(GATTClientError) {
    guard start != 0, start <= end else { throw .invalidHandleRange(start: start, end: end) }
}
