import BluewireATT

/// What GATT operations run against: one connection's ATT bearer, seen from the client side.
///
/// The Host implements this over the live connection; tests implement it with a scripted in-memory
/// server or wire it to an in-process `GATTServer`. Operations never talk to the bearer in any other way,
/// so the `GATTOperationQueue` owning the performer decides which operation may use the bearer when.
///
/// Implementations must honour task cancellation: a cancelled `request` throws promptly (the bearer
/// may still wait for the late response before sending the next request, as Core Vol 3 Part F §3.3.2
/// allows only one outstanding request) so that timeouts and cancellation can end an operation.
public protocol ATTRequestPerformer: Sendable {
    /// The ATT_MTU in force on the bearer (23 until an MTU exchange, Core Vol 3 Part F §3.2.8).
    var mtu: Int { get async }

    /// Sends a request PDU and returns the server's answer: its response, or an Error Response PDU
    /// (which the GATT client procedures turn into typed errors).
    /// - Throws: when no answer can come: `.disconnected` (the link dropped, or there is none),
    ///   `.att(.transactionTimeout)` (the 30 s ATT transaction timeout, §3.3.3) or another bearer
    ///   error, `.cancelled` (the calling task was cancelled).
    nonisolated(nonsending) func request(_ pdu: ATTPDU) async throws(ConnectionError) -> ATTPDU

    /// Sends a PDU the server does not answer (Write Command, Signed Write Command).
    nonisolated(nonsending) func send(_ pdu: ATTPDU) async throws(ConnectionError)

    /// Values the server sends for `valueHandle` in Handle Value Notifications and Indications (the
    /// performer confirms indications itself, §3.4.7.2). Registration is complete when this returns, so a
    /// caller that asks before enabling the CCCD misses nothing. The stream finishes on disconnection.
    func notifications(for valueHandle: UInt16) async -> AsyncStream<ArraySlice<UInt8>>
}
