import BluewireCore
import BluewireGATT
import Synchronization

/// Everything the Host keeps for the peripheral role. Only touched on the Host's executor, except
/// `dynamicWrites`, which write handlers fill from inside the GATT server.
struct PeripheralState {
    var observers: [UInt64: AsyncStream<PeripheralEvent>.Continuation] = [:]
    let dynamicWrites = DynamicWriteRecorder()
}

/// What became of an indication sent to several centrals.
public struct IndicationOutcome: Sendable, Hashable {
    /// Connections whose central confirmed the indication (Handle Value Confirmation).
    public var confirmed: [UInt16] = []
    /// Connections that were subscribed but will never confirm it, and why.
    public var failed: [UInt16: IndicationFailure] = [:]

    public init(confirmed: [UInt16] = [], failed: [UInt16: IndicationFailure] = [:]) {
        self.confirmed = confirmed
        self.failed = failed
    }
}

/// Why a subscribed central did not confirm an indication.
public enum IndicationFailure: Sendable, Hashable {
    /// Its queue of indications waiting behind the outstanding one was full
    /// (`GATTServerConfiguration.maximumQueuedIndications`): the value was dropped.
    case queueFull
    /// It unsubscribed before its turn came.
    case unsubscribed
    /// The link ended first (an unconfirmed indication times out after 30 s and the link is then
    /// dropped, Core Vol 3 Part F §3.3.3).
    case disconnected
}

/// Writes to dynamic values, recorded by the wrapped write handlers and published after the server
/// call that made them. Bounded like the server's own event buffer.
final class DynamicWriteRecorder: Sendable {
    private let writes = Mutex<[PeripheralWrite]>([])
    /// Called when a write is recorded while none waits (the engine raises no event for such a
    /// write: the host publishes them from it).
    private let firstRecord = Mutex<(@Sendable () -> Void)?>(nil)
    static let limit = 256

    func record(_ write: PeripheralWrite) {
        let first = writes.withLock { writes in
            defer { if writes.count < DynamicWriteRecorder.limit { writes.append(write) } }
            return writes.isEmpty
        }
        if first, let hook = firstRecord.withLock({ $0 }) { hook() }
    }

    func onFirstRecord(_ hook: @escaping @Sendable () -> Void) {
        firstRecord.withLock { $0 = hook }
    }

    func take() -> [PeripheralWrite] {
        writes.withLock { writes in
            defer { writes = [] }
            return writes
        }
    }

    /// `database` with every dynamic write handler wrapped so that accepted writes are recorded.
    func observing(_ database: GATTDatabase) -> GATTDatabase {
        var observed = database
        for attribute in database.attributes {
            guard case .dynamic(let dynamic) = attribute.value, let original = dynamic.write else { continue }
            let wrapped: GATTWriteHandler = { [self] (request: GATTWriteRequest) throws(GATTAttributeError) in
                try original(request)
                record(PeripheralWrite(
                    connection: request.connection, handle: request.handle, value: request.value,
                    offset: request.offset, kind: request.kind))
            }
            var recorded = dynamic
            recorded.write = wrapped
            // Cannot fail: the handle comes from this database and the value's length is unchanged.
            try? observed.setValue(.dynamic(recorded), for: attribute.handle)
        }
        return observed
    }
}
