import Synchronization

/// Collects values from `@Sendable` closures (a clock's scheduled actions, a controller's callbacks),
/// for a test to read afterwards.
public final class SendableRecorder<Value: Sendable>: Sendable {
    private let storage = Mutex<[Value]>([])

    public init() {}

    public func append(_ value: Value) { storage.withLock { $0.append(value) } }

    public var values: [Value] { storage.withLock { $0 } }
}
