import Bluewire
import BluewireCore
import BluewireTransport
import Foundation
import Testing
import PeerTestSupport

/// A JSON value from an `EVENT` line of bumble_link.py.
enum PeerJSON: Sendable, Hashable, Decodable, CustomStringConvertible {
    case string(String), number(Double), bool(Bool), array([PeerJSON]), object([String: PeerJSON]), null

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([PeerJSON].self) { self = .array(value) }
        else { self = .object(try container.decode([String: PeerJSON].self)) }
    }

    init(line: String) {
        self = (try? JSONDecoder().decode(PeerJSON.self, from: Data(line.utf8))) ?? .string(line)
    }

    subscript(key: String) -> PeerJSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var int: Int? {
        if case .number(let value) = self { return Int(exactly: value) }
        return nil
    }

    var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// Whether this is an event of central `index` that has `key` (with `value` as integer, if given).
    func isCentral(_ index: Int, _ key: String, _ value: Int? = nil) -> Bool {
        guard self["central"]?.int == index, let field = self[key] else { return false }
        return value == nil || field.int == value
    }

    var description: String {
        switch self {
        case .string(let s): "\"\(s)\""
        case .number(let n): n.rounded() == n ? String(Int(n)) : String(n)
        case .bool(let b): String(b)
        case .null: "null"
        case .array(let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .object(let members):
            "{" + members.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        }
    }
}

struct WaitTimedOut: Error, CustomStringConvertible {
    var description: String
}

/// Collects the events of a sequence so that a test can wait, with a deadline, until the ones it
/// expects have arrived (without sleeping or polling).
actor EventLog<Event: Sendable> {
    private(set) var events: [Event] = []
    private var waiters: [UInt64: (count: Int, predicate: @Sendable (Event) -> Bool, continuation: CheckedContinuation<[Event], any Error>)] = [:]
    private var nextID: UInt64 = 0
    private var pump: Task<Void, Never>?
    /// Whether the sequence has ended (for a process's output: it exited and its pipe is drained).
    private(set) var isFinished = false

    init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Event {
        pump = nil
        Task { await self.start(sequence) }
    }

    private func start<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Event {
        pump = Task {
            do {
                for try await event in sequence { self.append(event) }
            } catch {}
            self.isFinished = true
        }
    }

    private func append(_ event: Event) {
        events.append(event)
        for (id, waiter) in waiters {
            let matches = events.filter(waiter.predicate)
            if matches.count >= waiter.count {
                waiters[id] = nil
                waiter.continuation.resume(returning: matches)
            }
        }
    }

    /// Waits until at least `count` events (seen so far or later) match, and returns all that do.
    @discardableResult
    func wait(
        for count: Int = 1, within timeout: Duration = .seconds(15), _ what: String = "event",
        where predicate: @escaping @Sendable (Event) -> Bool
    ) async throws -> [Event] {
        let matches = events.filter(predicate)
        if matches.count >= count { return matches }
        let id = nextID
        nextID += 1
        let timer = Task {
            try await Task.sleep(for: timeout)
            self.expire(id, what)
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            waiters[id] = (count, predicate, continuation)
        }
    }

    /// The first event matching, waiting for it if needed.
    @discardableResult
    func first(
        within timeout: Duration = .seconds(15), _ what: String = "event",
        where predicate: @escaping @Sendable (Event) -> Bool
    ) async throws -> Event {
        try await wait(for: 1, within: timeout, what, where: predicate)[0]
    }

    private func expire(_ id: UInt64, _ what: String) {
        guard let waiter = waiters.removeValue(forKey: id) else { return }
        let seen = events.suffix(30).map { "\($0)" }.joined(separator: "\n  ")
        waiter.continuation.resume(throwing: WaitTimedOut(description: "timed out waiting for \(what); last events:\n  \(seen)"))
    }

    func stop() { pump?.cancel() }
}

/// A random static address (Core Vol 6 Part B §1.3.2.1) for the Host under test.
func newStaticAddress() -> BluetoothAddress {
    BluetoothAddress.randomStatic(UInt64.random(in: 0...0x3FFF_FFFF_FFFF))
}

/// Starts a Host on one of the peer's controllers with `address` as its random static address.
/// Commands may wait 10 s (not 2): bumble answers from Python, on a machine the whole suite shares.
func startHost(on transport: String, address: BluetoothAddress) async throws -> BluetoothHost {
    let host = BluetoothHost(
        transport: try await TransportSpec(parsing: transport).open(),
        configuration: HostConfiguration(randomAddress: address, commandTimeout: .seconds(10)))
    try await host.start()
    return host
}

/// A bumble link whose centrals (`--central`) target a Host that runs on its first controller, plus
/// logs of the peer's events and of the Host's peripheral events. Everything stops afterwards.
func withPeripheralLink<R>(
    centrals: Int = 1, manual: Bool = false, extraArguments: [String] = [],
    _ body: (BumblePeer, BluetoothHost, EventLog<PeerJSON>, EventLog<PeripheralEvent>) async throws -> R
) async throws -> R {
    let address = newStaticAddress()
    var arguments = ["--central", address.hexString, "--centrals", String(centrals)]
    if manual { arguments.append("--manual") }
    return try await withBumblePeer([.tcp], arguments: arguments + extraArguments) { peer in
        let host = try await startHost(on: peer.transports[0], address: address)
        let peerLog = EventLog(peer.events.map { PeerJSON(line: $0) })
        let hostLog = EventLog(await host.peripheralEvents())
        do {
            let result = try await body(peer, host, peerLog, hostLog)
            await host.close()
            return result
        } catch {
            await host.close()
            throw error
        }
    }
}

extension BumblePeer {
    /// Sends a command to central `central` (see bumble_link.py).
    func command(_ central: Int, _ op: String, _ fields: [String: any Sendable] = [:]) {
        var object: [String: Any] = ["central": central, "op": op]
        for (key, value) in fields { object[key] = value }
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        send(line: String(decoding: data, as: UTF8.self))
    }
}

/// Lowercase hex, as bumble_link.py prints values.
func hexBytes(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}
