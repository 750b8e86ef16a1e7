import BluewireCore
import BluewireGATT
import Synchronization

/// Everything the Host keeps for the peripheral role. Only touched on the Host's executor, except
/// `dynamicWrites`, which write handlers fill from inside the GATT server.
struct PeripheralState {
    var observers: [UInt64: AsyncStream<PeripheralEvent>.Continuation] = [:]
    var advertising = AdvertisingState()
    /// Links on which the local device is peripheral.
    var centrals: Set<UInt16> = []
    /// Per connection, the `indicate` calls waiting on it, in the order of the server's indication
    /// queue (the one in flight first).
    var indicationTickets: [UInt16: [IndicationGroup]] = [:]
    let dynamicWrites = DynamicWriteRecorder()
}

/// Advertising as the Host last asked for it and as it believes the controller does it.
struct AdvertisingState {
    /// What `startAdvertising` asked for; nil when advertising is not wanted.
    var advertisement: Advertisement?
    var plan: AdvertisingPlan?
    /// Whether the controller is advertising (it stops by itself when a central connects).
    var isEnabled = false
    /// The plan whose enable command is in flight (until the task that sent it resumes).
    var enabling: AdvertisingPlan?
    /// Advertising commands run one sequence at a time: a restart after a connection must not
    /// interleave with `startAdvertising` or `stopAdvertising`.
    var busy = false
    var waiters: [CheckedContinuation<Void, Never>] = []
}

/// One `indicate` call: how many connections still owe a confirmation, and the results so far.
final class IndicationGroup {
    var remaining = 0
    var outcome = IndicationOutcome()
    var continuation: CheckedContinuation<IndicationOutcome, Never>?

    func resolve(_ connection: UInt16, _ result: IndicationFailure?) {
        if let result { outcome.failed[connection] = result } else { outcome.confirmed.append(connection) }
        remaining -= 1
        if remaining == 0, let continuation {
            self.continuation = nil
            outcome.confirmed.sort()
            continuation.resume(returning: outcome)
        }
    }
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
    /// Called when a write is recorded while none waits (the engine backend, which raises no event
    /// for such a write, publishes them from it).
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
