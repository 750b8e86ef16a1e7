import BluewireCore
import BluewireHCI
import BluewireHostEngine
import BluewireTransport

/// The devices a scan finds (`EngineHost.scan`), in the order their reports arrived, buffered without
/// bound until read. Ends when the scan stops (`stopScan()`, its duration, a connect that stops it),
/// throws the cause when the scan's machine failed (Core Vol 4 Part E §7.8.64), and stops the scan
/// once every copy of the sequence and its iterators is gone.
public struct EngineScanResults: AsyncSequence, Sendable {
    public typealias Element = DiscoveredDevice
    public typealias Failure = HostEngineError

    let registration: EngineScanRegistration

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(registration: registration) }

    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Element = DiscoveredDevice
        public typealias Failure = HostEngineError
        let registration: EngineScanRegistration

        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(HostEngineError) -> DiscoveredDevice? {
            try await registration.queue.next(isolation: actor)
        }

        public mutating func next() async throws(HostEngineError) -> DiscoveredDevice? {
            try await registration.queue.next(isolation: nil)
        }
    }
}

/// Stops its scan when the last copy of its sequence is gone.
final class EngineScanRegistration: Sendable {
    let queue = SingleConsumerQueue<DiscoveredDevice, HostEngineError>()
    private let end: @Sendable () -> Void

    init(end: @escaping @Sendable () -> Void = {}) { self.end = end }

    static func failed(_ error: HostEngineError) -> EngineScanRegistration {
        let registration = EngineScanRegistration()
        registration.queue.finish(throwing: error)
        return registration
    }

    deinit { end() }
}

/// The scan an `EngineScanResults` reads.
struct EngineScanRecord {
    var id: UInt64
    weak var registration: EngineScanRegistration?
}

extension EngineHost {
    /// Scans (Core Vol 4 Part E §7.8.64/§7.8.65, or the legacy commands) and returns what it finds
    /// as a sequence, `filter` applied by the engine (names, services, RSSI, duplicates). The scan
    /// starts before this returns; `duration` ends it on the host's clock.
    /// - Throws (from the sequence): `.scanAlreadyRunning`, `.notRunning`, or the scan's failure.
    public func scan(
        filter: AdvertisingFilter = AdvertisingFilter(), parameters: ScanParameters = ScanParameters(), duration: TimeSpan? = nil
    ) -> EngineScanResults {
        guard scanRecord == nil else { return EngineScanResults(registration: .failed(.scanAlreadyRunning)) }
        let id = UInt64(nextRequestID)
        let registration = EngineScanRegistration { [weak self] in
            guard let self else { return }
            Task { await self.stopScan(id: id) }
        }
        scanRecord = EngineScanRecord(id: id, registration: registration)
        if case .failure(let error)? = performNow(.startScan(parameters, filter: filter, duration: duration)) {
            scanRecord = nil
            return EngineScanResults(registration: .failed(error))
        }
        return EngineScanResults(registration: registration)
    }

    /// Stops the running scan; its sequence ends.
    public func stopScan() async { await stopScan(id: nil) }

    func stopScan(id: UInt64?) async {
        guard let record = scanRecord, id == nil || record.id == id else { return }
        scanRecord = nil
        record.registration?.queue.finish()
        _ = await perform(.stopScan)
    }

    /// The scan's events, from `drain`.
    func scanEvent(_ event: HostEngineEvent) {
        guard let record = scanRecord else { return }
        switch event {
        case .deviceFound(let device): record.registration?.queue.yield(device)
        case .scanStateChanged(let transition, let cause) where transition.to != .disconnected(.scanning):
            scanRecord = nil
            if let cause { record.registration?.queue.finish(throwing: cause) } else { record.registration?.queue.finish() }
        default: break
        }
    }
}
