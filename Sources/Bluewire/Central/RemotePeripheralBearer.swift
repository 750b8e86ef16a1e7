import BluewireATT
import Synchronization

/// The link a `RemotePeripheral` has now, readable from any task (the performer reads it for every
/// request) and written by the peripheral alone.
final class RemotePeripheralLinkSlot: Sendable {
    private let current = Mutex<RemotePeripheralLink?>(nil)

    var link: RemotePeripheralLink? {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}

/// What a `RemotePeripheral`'s queue runs operations against: the ATT bearer of whatever link the
/// peripheral has when a request goes out. Custom `GATTOperation`s (`RemotePeripheral.run(_:)`)
/// use it like a connection's; with no link, requests fail with `ConnectionError.disconnected` (Unknown
/// Connection Identifier, as for a link that is gone), which `AutoConnectDecorator` answers by
/// reconnecting (when it may resume the operation).
struct RemotePeripheralBearer: ATTRequestPerformer {
    let slot: RemotePeripheralLinkSlot

    var mtu: Int {
        get async { await slot.link?.connection.mtu ?? ATTBearer.defaultMTU }
    }

    func request(_ pdu: ATTPDU) async throws(ConnectionError) -> ATTPDU {
        guard let connection = slot.link?.connection else { throw .disconnected(.unknownConnectionIdentifier) }
        return try await connection.request(pdu)
    }

    func send(_ pdu: ATTPDU) async throws(ConnectionError) {
        guard let connection = slot.link?.connection else { throw .disconnected(.unknownConnectionIdentifier) }
        try await connection.send(pdu)
    }

    func notifications(for valueHandle: UInt16) async -> AsyncStream<ArraySlice<UInt8>> {
        guard let connection = slot.link?.connection else { return AsyncStream { $0.finish() } }
        return await connection.notifications(for: valueHandle)
    }
}

struct AnyHostClock: HostClock {
    let base: any HostClock
    var now: MonotonicInstant { base.now }
    func sleep(until deadline: MonotonicInstant) async throws { try await base.sleep(until: deadline) }
}
