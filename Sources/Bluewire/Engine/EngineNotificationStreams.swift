import BluewireHostEngine

/// The per-handle notification streams of `EngineHost` (`EngineConnection.notifications(for:)`): which
/// stream gets the value of each Handle Value Notification and Indication the engine decodes, and
/// which end when a link does. It routes only; the engine has confirmed indications already.
struct EngineNotificationStreams {
    struct Key: Hashable {
        var connection: UInt16
        var valueHandle: UInt16
    }

    typealias Continuation = AsyncStream<ArraySlice<UInt8>>.Continuation

    private var streams: [Key: [(id: UInt64, continuation: Continuation)]] = [:]
    private var nextID: UInt64 = 1

    var isEmpty: Bool { streams.isEmpty }

    /// Adds a stream for `key`; the id removes it.
    mutating func add(_ continuation: Continuation, for key: Key) -> UInt64 {
        let id = nextID
        nextID += 1
        streams[key, default: []].append((id, continuation))
        return id
    }

    /// The consumer stopped iterating: forget its stream.
    mutating func remove(_ id: UInt64, for key: Key) {
        streams[key]?.removeAll { $0.id == id }
        if streams[key]?.isEmpty == true { streams[key] = nil }
    }

    /// A notification or indication of `valueHandle` arrived on `connection`.
    func deliver(connection: UInt16, valueHandle: UInt16, value: ArraySlice<UInt8>) {
        guard let targets = streams[Key(connection: connection, valueHandle: valueHandle)] else { return }
        for target in targets { target.continuation.yield(value) }
    }

    /// The link ended: its streams finish.
    mutating func linkDown(_ connection: UInt16) {
        for key in streams.keys where key.connection == connection {
            for target in streams.removeValue(forKey: key) ?? [] { target.continuation.finish() }
        }
    }

    /// The host closed or its transport ended: every stream finishes.
    mutating func finishAll() {
        for targets in streams.values { for target in targets { target.continuation.finish() } }
        streams.removeAll()
    }
}
