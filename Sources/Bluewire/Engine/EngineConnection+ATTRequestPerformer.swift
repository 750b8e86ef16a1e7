import BluewireATT
import BluewireHCI
import BluewireHostEngine

/// An engine link is what GATT operations run against, as a `BluetoothHost` `Connection` is:
/// `GATTOperationQueue(performer: connection)` runs the ready-made `GATTOperations` and custom composite
/// operations over the engine. Requests go through the link's client queue in the engine
/// (`GATTClientRequest.attRequest`), serialised with the engine's own procedures, one outstanding per
/// bearer (Core Vol 3 Part F §3.3.2), under its 30 s transaction timeout (§3.3.3); commands go out at
/// once, in order (`.attCommand`). The engine neither checks nor moves the peer's connection state
/// machine for them: the operations own their phases.
///
/// Errors are `ConnectionError`s, as a `Connection`'s, so `GATTError` maps both alike:
/// `.disconnected(reason)`, `.att(...)` (refused PDU, too long for ATT_MTU, transaction timeout),
/// `.cancelled` when the calling task was cancelled (answered at once; the engine keeps the request's
/// place in the queue and drops its late answer).
extension EngineConnection: ATTRequestPerformer {
    /// The link's ATT_MTU (23 until an MTU exchange, Core Vol 3 Part F §3.2.8; 23 once the link is gone).
    public var mtu: Int {
        get async { await host.mtu(of: self) ?? ATTBearer.defaultMTU }
    }

    /// Sends one request PDU and returns the server's answer: its response, or its Error Response as a PDU.
    public func request(_ pdu: ATTPDU) async throws(ConnectionError) -> ATTPDU {
        switch await host.performCancellable(.gatt(connection: link.handle, .attRequest(pdu)), on: self) {
        case .success(.attResponse(let answer)): return answer
        case .success(let other): throw .gatt("unexpected completion \(other)")
        case .failure(let error): throw Self.connectionError(error)
        }
    }

    /// Sends a Write Command or Signed Write Command (no response, §3.4.5.3, §3.4.5.4).
    public func send(_ pdu: ATTPDU) async throws(ConnectionError) {
        if case .failure(let error) = await host.performCancellable(.gatt(connection: link.handle, .attCommand(pdu)), on: self) {
            throw Self.connectionError(error)
        }
    }

    /// Values of the notifications and indications for `valueHandle` on this link (the engine confirms
    /// indications, §3.4.7.2); registered before this returns, finished when the link ends.
    public func notifications(for valueHandle: UInt16) async -> AsyncStream<ArraySlice<UInt8>> {
        await host.notificationValues(on: self, valueHandle: valueHandle)
    }

    /// The engine's error as the `ConnectionError` GATT operations expect.
    static func connectionError(_ error: HostEngineError) -> ConnectionError {
        switch error {
        case .disconnected(let reason): .disconnected(reason)
        // The link this connection was made for is gone (a later one may have its handle).
        case .unknownConnection, .staleConnection: .disconnected(.unknownConnectionIdentifier)
        case .att(let bearer): .att(bearer)
        case .cancelled: .cancelled
        default: .gatt("\(error)")
        }
    }
}
