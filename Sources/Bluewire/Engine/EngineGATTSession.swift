import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import Synchronization

/// Something that knows whether, and why, a link ended (what a `CharacteristicSubscription` reports
/// when its values stop).
protocol LinkEndRecord: AnyObject, Sendable {
    var disconnection: HCIStatus? { get }
}

extension GATTClientSession: LinkEndRecord {}

/// What one engine link's `EngineGATTClient` keeps between operations: its operation queue, the
/// database it discovered, its subscriptions and, once the link is gone, why.
final class EngineGATTSession: LinkEndRecord {
    struct State {
        var cache = GATTClientCache()
        var disconnection: HCIStatus?
        /// Live subscriptions by sink id: the characteristic and its CCCD.
        var subscriptions: [UInt64: (characteristic: GATTCharacteristic, descriptorHandle: UInt16)] = [:]
    }

    let connection: EngineConnection
    let queue: GATTOperationQueue
    private let state = Mutex(State())

    init(connection: EngineConnection) {
        self.connection = connection
        // On the host's executor: the host fails the queue's operations synchronously when the link drops.
        queue = GATTOperationQueue(performer: connection, sharingExecutorWith: connection.host)
    }

    func withState<R>(_ body: (inout State) -> R) -> R { state.withLock { body(&$0) } }

    var cache: GATTClientCache { withState { $0.cache } }
    var disconnection: HCIStatus? { withState { $0.disconnection } }

    /// Called on the host's executor when the link ends: what the queue holds fails with the reason.
    func linkEnded(_ reason: HCIStatus) {
        withState { $0.disconnection = reason }
        queue.assumeIsolated { $0.failAll(with: .disconnected(reason: reason.rawValue)) }
    }
}
