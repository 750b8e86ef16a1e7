import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTransport
import Foundation
import Synchronization
import Testing
import PeerTestSupport

/// The database the bumble peripheral serves in the central interop tests (bumble_link.py --gatt),
/// behind bumble's own Generic Access and Generic Attribute services.
enum GATTInteropDatabase {
    static let service = BluetoothUUID(0xFFE0)
    /// READ, NOTIFY, INDICATE: counts 0..<counterCount on each subscription.
    static let counter = BluetoothUUID(0xFFE1)
    /// READ, WRITE: a value longer than any single PDU at the default ATT_MTU.
    static let long = BluetoothUUID(0xFFE2)
    /// READ, WRITE, WRITE WITHOUT RESPONSE.
    static let control = BluetoothUUID(0xFFE3)
    /// NOTIFY: wideCount values of wideSize bytes each (only whole with an exchanged MTU).
    static let wide = BluetoothUUID(0xFFE4)
    static let uartService = BluetoothUUID(parsing: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")!
    static let uartRX = BluetoothUUID(parsing: "6E400002-B5A3-F393-E0A9-E50E24DCCA9E")!
    static let uartTX = BluetoothUUID(parsing: "6E400003-B5A3-F393-E0A9-E50E24DCCA9E")!

    static let longValue: [UInt8] = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
    static let counterCount = 100
    static let wideCount = 20
    static let wideSize = 244

    static var json: String {
        let long = longValue.map { String(format: "%02x", $0) }.joined()
        return """
            {"services": [
              {"uuid": "FFE0", "characteristics": [
                {"uuid": "FFE1", "properties": ["READ", "NOTIFY", "INDICATE"], "value": "00", "counter": \(counterCount)},
                {"uuid": "FFE2", "properties": ["READ", "WRITE"], "value": "\(long)"},
                {"uuid": "FFE3", "properties": ["READ", "WRITE", "WRITE_WITHOUT_RESPONSE"], "value": "00"},
                {"uuid": "FFE4", "properties": ["NOTIFY"], "counter": \(wideCount), "size": \(wideSize)}]},
              {"uuid": "6E400001-B5A3-F393-E0A9-E50E24DCCA9E", "characteristics": [
                {"uuid": "6E400002-B5A3-F393-E0A9-E50E24DCCA9E", "properties": ["WRITE", "WRITE_WITHOUT_RESPONSE"]},
                {"uuid": "6E400003-B5A3-F393-E0A9-E50E24DCCA9E", "properties": ["NOTIFY"]}]}]}
            """
    }

    /// The description, written to a fresh temporary file.
    static func file() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("gatt-central-\(UUID().uuidString.prefix(8)).json")
        try Data(json.utf8).write(to: url)
        return url
    }
}

/// One attribute of the bumble server's table, as bumble_link.py reports it.
struct BumbleAttribute: Decodable, Sendable {
    var handle: UInt16
    /// Little-endian hex, as on the wire.
    var type: String
    /// Hex; nil for values bumble computes on each read.
    var value: String?
}

/// The EVENT lines of a bumble_link.py run, read once and kept, so a test can wait for one.
final class BumbleEventLog: Sendable {
    typealias Predicate = @Sendable ([String: Any]) -> Bool

    private struct State {
        var lines: [String] = []
        var waiters: [UInt64: (predicate: Predicate, continuation: CheckedContinuation<String?, Never>)] = [:]
        var nextID: UInt64 = 0
        var ended = false
    }

    private let state = Mutex(State())

    init(_ events: AsyncStream<String>) {
        Task { [self] in
            for await line in events { append(line) }
            let waiters = state.withLock { state in
                state.ended = true
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            for waiter in waiters { waiter.continuation.resume(returning: nil) }
        }
    }

    static func object(_ line: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
    }

    private func append(_ line: String) {
        let object = Self.object(line)
        let matched = state.withLock { state in
            state.lines.append(line)
            let ids = state.waiters.filter { $0.value.predicate(object) }.keys
            return ids.compactMap { state.waiters.removeValue(forKey: $0)?.continuation }
        }
        for continuation in matched { continuation.resume(returning: line) }
    }

    /// Every event so far, parsed.
    var events: [[String: Any]] { state.withLock { $0.lines }.map(Self.object) }

    /// The first event (already seen or still to come) that `predicate` accepts; nil if the peer
    /// ended first or `timeout` passed.
    func first(timeout: Duration = .seconds(10), where predicate: @escaping Predicate) async -> [String: Any]? {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let timer = Task { [self] in
            try await Task.sleep(for: timeout)
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: nil)
        }
        let line: String? = await withCheckedContinuation { continuation in
            let found: String?? = state.withLock { state in
                if let line = state.lines.first(where: { predicate(Self.object($0)) }) { return .some(line) }
                if state.ended { return .some(nil) }
                state.waiters[id] = (predicate, continuation)
                return nil
            }
            if let found { continuation.resume(returning: found) }
        }
        timer.cancel()
        return line.map(Self.object)
    }
}

/// A Bluewire central connected to a bumble GATT peripheral on a fresh link.
struct GATTPeripheralSession: Sendable {
    let host: BluetoothHost
    let connection: Connection
    let gatt: GATTClient
    let events: BumbleEventLog
    /// The peripheral's attribute table as bumble reports it.
    let database: [BumbleAttribute]

    /// The value handle of the characteristic of type `uuid` in bumble's table.
    func valueHandle(of uuid: BluetoothUUID) throws -> UInt16 {
        let type = uuid.attBytes.map { String(format: "%02x", $0) }.joined()
        return try #require(database.first { $0.type == type }?.handle, "bumble serves \(uuid)")
    }

    /// The discovered characteristic of type `uuid` (discovering services and characteristics first).
    func characteristic(_ uuid: BluetoothUUID) async throws -> GATTCharacteristic {
        if let cached = gatt.cache.characteristics(withUUID: uuid).first { return cached }
        _ = try await gatt.discoverAll()
        return try #require(gatt.cache.characteristics(withUUID: uuid).first, "\(uuid) discovered")
    }
}

/// Where a test's capture goes: `Captures/NAME` in the repository when `BLUEWIRE_UPDATE_CAPTURES` is set
/// (to refresh the committed sessions), a temporary file otherwise.
func interopCapturePath(_ name: String) -> String {
    if ProcessInfo.processInfo.environment["BLUEWIRE_UPDATE_CAPTURES"] != nil {
        return BumblePeer.repositoryRoot.appendingPathComponent("Captures/\(name)").path
    }
    return FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString.prefix(8))-\(name)").path
}

/// Deletes a capture `interopCapturePath` put in the temporary directory (recorded ones stay).
func removeTemporaryCapture(_ path: String?) {
    guard let path, path.hasPrefix(FileManager.default.temporaryDirectory.path) else { return }
    try? FileManager.default.removeItem(atPath: path)
}

/// Starts bumble_link.py with one controller for Bluewire and a GATT peripheral serving
/// `GATTInteropDatabase`, brings a Host up on it (recording to `capture` if given, with `ownAddress` as
/// its random static address if given), connects, runs `body`, and tears everything down. `body` is
/// bounded by `timeout`.
func withGATTPeripheral<R: Sendable>(
    arguments: [String] = [], capture: String? = nil, ownAddress: String? = nil, timeout: Duration = .seconds(15),
    _ body: @escaping @Sendable (GATTPeripheralSession) async throws -> R
) async throws -> R {
    let file = try GATTInteropDatabase.file()
    defer { try? FileManager.default.removeItem(at: file) }
    let peer = try await BumblePeer.start([.tcp], arguments: ["--peripheral", "--interval", "50", "--gatt", file.path] + arguments)
    defer { peer.stop() }
    let events = BumbleEventLog(peer.events)
    let table = try #require(await events.first { $0["database"] != nil }?["database"], "bumble reports its attribute table")
    let database = try JSONDecoder().decode([BumbleAttribute].self, from: JSONSerialization.data(withJSONObject: table))
    var transport: any HCITransport = try await TransportSpec(parsing: peer.transports[0]).open()
    if let capture { transport = try CaptureTap(wrapping: transport, path: capture) }
    // A recorded session keeps one address, so that its replay can use it again.
    let own = ownAddress.flatMap { BluetoothAddress(parsing: $0 + "/random") }
    // Generous timeouts: bumble shares two cores with the rest of the suite, and a Python controller
    // starved for a few seconds is slow, not broken.
    let host = BluetoothHost(
        transport: transport,
        configuration: HostConfiguration(randomAddress: own, commandTimeout: .seconds(10), connectionTimeout: .seconds(15)))
    do {
        try await host.start()
        let address = try #require(peer.ready.device?.address)
        let peripheral = try #require(BluetoothAddress(parsing: address + "/random"))
        let connection = try await host.connect(to: peripheral)
        let session = GATTPeripheralSession(
            host: host, connection: connection, gatt: await connection.gatt, events: events, database: database)
        let result = try await bounded(timeout) { try await body(session) }
        await host.close()
        return result
    } catch {
        await host.close()
        throw error
    }
}

struct TimedOut: Error, CustomStringConvertible {
    var timeout: Duration
    var description: String { "the test did not finish within \(timeout)" }
}

/// Runs `body`, failing with `TimedOut` (and cancelling it) if it takes longer than `timeout`: an
/// interop test never hangs the suite.
func bounded<R: Sendable>(_ timeout: Duration, _ body: @escaping @Sendable () async throws -> R) async throws -> R {
    try await withThrowingTaskGroup(of: R.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw TimedOut(timeout: timeout)
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw TimedOut(timeout: timeout) }
        return first
    }
}

/// The ATT opcodes (first byte of each ATT PDU) the host sent, read back from a btsnoop capture.
func sentATTOpcodes(inCapture path: String) throws -> [UInt8] {
    let reader = try CaptureFileReader(path: path)
    defer { reader.close() }
    var opcodes: [UInt8] = []
    while let record = try reader.next() {
        guard record.direction == .hostToController, let packet = record.packet, packet.type == .acl else { continue }
        let bytes = Array(packet.payload)
        // First fragment (packet boundary 0b00), L2CAP CID 0x0004: the opcode is the 9th byte.
        guard bytes.count > 8, (bytes[1] >> 4) & 0x3 == 0, bytes[6] == 0x04, bytes[7] == 0x00 else { continue }
        opcodes.append(bytes[8])
    }
    return opcodes
}

/// Waits until `condition` holds, checking every millisecond; fails after `timeout`.
func waitUntil(
    timeout: Duration = .seconds(5), _ condition: () async -> Bool, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let deadline = ContinuousClock.now + timeout
    while !(await condition()) {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not met within \(timeout)", sourceLocation: sourceLocation)
            throw TimedOut(timeout: timeout)
        }
        try await Task.sleep(for: .milliseconds(1))
    }
}
