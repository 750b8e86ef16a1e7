import BluewireHCI
import BluewireTransport

/// The devices a scan finds (`BluetoothHost.scan`), in the order the controller reported them.
///
/// The sequence finishes when the scan stops (`stopScan()`, the scan's duration, the host
/// closing), and throws the `HostError` that ended it otherwise: `.notRunning`,
/// `.scanAlreadyRunning`, `.command(...)` when the controller refused a scan command,
/// `.hardwareError(code:)`, `.transport(...)`. Once the sequence and every iterator of it are gone
/// (the consumer broke out of its loop, its task was cancelled), the host stops the scan.
/// One consumer: devices buffer without bound until iterated.
public struct ScanResults: AsyncSequence, Sendable {
    public typealias Element = DiscoveredDevice
    public typealias Failure = HostError

    let registration: ScanRegistration

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(registration: registration) }

    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Element = DiscoveredDevice
        public typealias Failure = HostError

        let registration: ScanRegistration

        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(HostError) -> DiscoveredDevice? {
            try await registration.queue.next(isolation: actor)
        }

        public mutating func next() async throws(HostError) -> DiscoveredDevice? {
            try await registration.queue.next(isolation: nil)
        }
    }
}

/// A scan's queue of devices, and what to do when the last reference to it goes (stop the scan).
final class ScanRegistration: Sendable {
    let queue = SingleConsumerQueue<DiscoveredDevice, HostError>()
    private let end: @Sendable () -> Void

    init(end: @escaping @Sendable () -> Void = {}) { self.end = end }

    /// A registration that already ended with `error`.
    static func failed(_ error: HostError) -> ScanRegistration {
        let registration = ScanRegistration()
        registration.queue.finish(throwing: error)
        return registration
    }

    deinit { end() }
}
