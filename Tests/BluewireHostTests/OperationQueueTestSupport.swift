import Bluewire
import BluewireATT
import BluewireGATT
import Synchronization
import Testing

// Test doubles for the operation queue tests. These are unit tests of the queue (ordering, exclusivity,
// cancellation, decorators), so the ATT side is a scripted in-memory performer acting as a tiny device,
// not a real bearer; the GATT procedures themselves are tested byte for byte in BluewireGATTTests.

/// A one-shot signal: `wait()` returns once `signal()` has been called (before or after).
final class Latch: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func signal() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let open = state.withLock { state in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if open { continuation.resume() }
        }
    }
}

/// Holds requests until opened. `arrived` is signalled when the first request reaches the gate, so a
/// test knows an operation is really running (no sleeping, no polling).
final class Gate: Sendable {
    let arrived = Latch()
    private let state = Mutex<(open: Bool, waiters: [UInt64: CheckedContinuation<Void, any Error>], next: UInt64)>(
        (false, [:], 0))
    /// Whether a waiter gives up (with CancellationError) when its task is cancelled; a gate that does
    /// not models a bearer that never answers and ignores cancellation.
    let honoursCancellation: Bool

    init(honoursCancellation: Bool = true) {
        self.honoursCancellation = honoursCancellation
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    func pass() async throws {
        let id = state.withLock { state in
            state.next += 1
            return state.next
        }
        arrived.signal()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let open = state.withLock { state in
                    if !state.open { state.waiters[id] = continuation }
                    return state.open
                }
                if open { continuation.resume() }
            }
        } onCancel: {
            guard honoursCancellation else { return }
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(throwing: CancellationError())
        }
    }
}

/// One thing the performer saw, in order.
enum PerformerEvent: Equatable, Sendable {
    case request(ATTPDU)
    case command(ATTPDU)
    case cancelled(ATTPDU)

    var pdu: ATTPDU {
        switch self {
        case .request(let pdu), .command(let pdu), .cancelled(let pdu): return pdu
        }
    }

    /// The attribute handle the PDU addresses (0 for PDUs without one).
    var handle: UInt16 {
        switch pdu {
        case .readRequest(let handle), .writeRequest(let handle, _), .writeCommand(let handle, _),
            .readBlobRequest(let handle, _), .prepareWriteRequest(let handle, _, _):
            return handle
        default:
            return 0
        }
    }
}

/// A scripted in-memory ATT server: attribute values in a dictionary, Read/Write/Write Command answered
/// from it, optional gates holding requests for a handle, optional canned errors, notifications pushed
/// on demand or after writes to a handle. Every request suspends once so that, were the queue not
/// serialising, other callers' requests would get in between.
actor ScriptedATTPerformer: ATTRequestPerformer {
    var values: [UInt16: [UInt8]] = [:]
    private(set) var events: [PerformerEvent] = []
    private(set) var maxConcurrentRequests = 0
    private var concurrentRequests = 0
    private var gates: [UInt16: Gate] = [:]
    private var eventWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    private var failures: [UInt16: [ATTErrorCode]] = [:]
    private var subscribers: [UInt16: [AsyncStream<ArraySlice<UInt8>>.Continuation]] = [:]
    /// After a write to the key handle, notify the value handle with what `reaction` returns.
    private var reactions: [UInt16: (notify: UInt16, reaction: @Sendable ([UInt8]) -> [UInt8])] = [:]
    let mtuValue: Int

    init(mtu: Int = 23, values: [UInt16: [UInt8]] = [:]) {
        self.mtuValue = mtu
        self.values = values
    }

    var mtu: Int { mtuValue }

    func setGate(_ gate: Gate, for handle: UInt16) { gates[handle] = gate }
    /// Later requests on `handle` pass freely (one already waiting at the gate keeps waiting).
    func removeGate(for handle: UInt16) { gates[handle] = nil }
    func setValue(_ value: [UInt8], for handle: UInt16) { values[handle] = value }

    /// Returns once at least `count` events have been seen.
    func waitForEvents(count: Int) async {
        guard events.count < count else { return }
        await withCheckedContinuation { eventWaiters.append((count, $0)) }
    }

    private func record(_ event: PerformerEvent) {
        events.append(event)
        let ready = eventWaiters.filter { $0.count <= events.count }
        eventWaiters.removeAll { $0.count <= events.count }
        for waiter in ready { waiter.continuation.resume() }
    }
    /// The next requests on `handle` fail with these errors, in order.
    func fail(_ handle: UInt16, with errors: [ATTErrorCode]) { failures[handle] = errors }
    func react(toWritesOn handle: UInt16, notifying notify: UInt16, with reaction: @escaping @Sendable ([UInt8]) -> [UInt8]) {
        reactions[handle] = (notify, reaction)
    }

    func request(_ pdu: ATTPDU) async throws(ConnectionError) -> ATTPDU {
        let event = PerformerEvent.request(pdu)
        record(event)
        concurrentRequests += 1
        maxConcurrentRequests = max(maxConcurrentRequests, concurrentRequests)
        defer { concurrentRequests -= 1 }
        await Task.yield()
        do {
            if let gate = gates[event.handle] { try await gate.pass() }
            try Task.checkCancellation()
        } catch {
            record(.cancelled(pdu))
            throw .cancelled
        }
        if var pending = failures[event.handle], !pending.isEmpty {
            let code = pending.removeFirst()
            failures[event.handle] = pending
            return .errorResponse(requestOpcode: pdu.opcode, handle: event.handle, error: code)
        }
        switch pdu {
        case .readRequest(let handle):
            guard let value = values[handle] else {
                return .errorResponse(requestOpcode: .readRequest, handle: handle, error: .invalidHandle)
            }
            return .readResponse(value: value.prefix(mtuValue - 1))
        case .writeRequest(let handle, let value):
            written(Array(value), to: handle)
            return .writeResponse
        default:
            return .errorResponse(requestOpcode: pdu.opcode, handle: 0, error: .requestNotSupported)
        }
    }

    func send(_ pdu: ATTPDU) async throws(ConnectionError) {
        record(.command(pdu))
        if case .writeCommand(let handle, let value) = pdu { written(Array(value), to: handle) }
    }

    func notifications(for valueHandle: UInt16) async -> AsyncStream<ArraySlice<UInt8>> {
        let (stream, continuation) = AsyncStream.makeStream(of: ArraySlice<UInt8>.self)
        subscribers[valueHandle, default: []].append(continuation)
        return stream
    }

    func notify(_ handle: UInt16, _ value: [UInt8]) {
        // Like a real server, notify only when the client has enabled it in the CCCD (handle + 1 here).
        guard values[handle + 1] == [0x01, 0x00] else { return }
        for subscriber in subscribers[handle] ?? [] { subscriber.yield(value[...]) }
    }

    /// The link went down: every notification stream ends.
    func disconnect() {
        for continuation in subscribers.values.joined() { continuation.finish() }
        subscribers = [:]
    }

    private func written(_ value: [UInt8], to handle: UInt16) {
        values[handle] = value
        if let (notifyHandle, reaction) = reactions[handle] { notify(notifyHandle, reaction(value)) }
    }
}

/// A collector shared between a test and the operations or decorators it observes.
final class EventLog<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])
    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var all: [Element] { items.withLock { $0 } }
}

/// An operation that fails with `error` for its first `failures` attempts, then reads `handle`.
struct FlakyOperation: GATTOperation {
    let failures: Int
    let error: GATTError
    let handle: UInt16
    let attempts: EventLog<Int>

    func execute(on context: any ATTRequestPerformer) async throws(GATTError) -> [UInt8] {
        let attempt = attempts.all.count + 1
        attempts.append(attempt)
        if attempt <= failures { throw error }
        return try await context.perform(ReadCharacteristicValue(handle: handle))
    }
}

/// `count` bytes counting up from `start` (wrapping).
func ramp(_ count: Int, from start: Int = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: start + $0) }
}
