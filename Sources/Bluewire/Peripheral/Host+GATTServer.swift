import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireTransport
import Glibc

extension BluetoothHost {
    /// Serves `database` to every central, replacing the previous one. Connected centrals keep their
    /// ATT_MTU but lose their subscriptions and queued writes (the handles may mean something else
    /// now); set the database before advertising.
    ///
    /// Dynamic values' handlers are called on the Host's executor for every read (with the offset a
    /// Read Blob asks for) and write; they must not block.
    public func setDatabase(_ database: GATTDatabase, configuration: GATTServerConfiguration? = nil) {
        engineSetDatabase(engineHost, database, configuration: configuration)
    }

    /// Loads a JSON database file (the attribute-table or services form of Docs/DatabaseFormat.md; see
    /// `GATTDatabase.init(json:)`) and serves it.
    ///
    /// The file is read and parsed on a thread of its own, off the Host's executor and off the
    /// cooperative pool: a slow or stuck file system (a network mount, a FIFO) delays only this call,
    /// never the connections the Host serves. Only installing the parsed database runs on the Host.
    @discardableResult
    public nonisolated func loadDatabase(
        jsonFile path: String, configuration: GATTServerConfiguration? = nil
    ) async throws(PeripheralError) -> GATTDatabase {
        let database = try await Self.readDatabase(jsonFile: path)
        await setDatabase(database, configuration: configuration)
        return database
    }

    /// Reads and parses a database file on a dedicated thread (the read may block).
    private nonisolated static func readDatabase(jsonFile path: String) async throws(PeripheralError) -> GATTDatabase {
        let outcome: Result<GATTDatabase, PeripheralError>
        do throws(TransportError) {
            outcome = try await DedicatedThread.run { () throws(PeripheralError) -> GATTDatabase in
                try parseDatabase(jsonFile: path)
            }
        } catch {
            throw .unreadableFile(path: path, reason: "no thread to read it on: \(error)")
        }
        return try outcome.get()
    }

    private nonisolated static func parseDatabase(jsonFile path: String) throws(PeripheralError) -> GATTDatabase {
        let bytes = try readFile(path)
        do {
            return try GATTDatabase(jsonBytes: bytes[...])
        } catch {
            throw .databaseFile(path: path, error)
        }
    }

    /// The whole file, read until end of file (so a pipe or FIFO works too, which Foundation's
    /// `Data(contentsOf:)` refuses).
    private nonisolated static func readFile(_ path: String) throws(PeripheralError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadableFile(path: path, reason: String(cString: strerror(errno))) }
        defer { _ = Glibc.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadableFile(path: path, reason: String(cString: strerror(errno)))
            }
            bytes += chunk[0..<count]
        }
    }

    /// The database served, with the values centrals have written.
    public var database: GATTDatabase {
        engineDatabase(engineHost)
    }

    /// Replaces a cached value (later reads return it). Centrals are not told: call `notify` or
    /// `indicate` for that.
    public func setValue(_ value: [UInt8], for handle: UInt16) throws(PeripheralError) {
        try engineSetValue(engineHost, value, for: handle)
    }

    /// Sends `value` in a Handle Value Notification (Core Vol 3 Part F §3.4.7.1) to `connection`, if
    /// its central is subscribed to notifications of the characteristic at `valueHandle`, cut to the
    /// link's ATT_MTU − 3 (Part G §4.10). Returns whether it was sent. The PDU goes through the link's
    /// ATT bearer and the L2CAP fragmenter, and leaves as the controller returns ACL credits.
    ///
    /// - Throws: `.staleConnection` when `connection` is not a live link of this host: its link
    ///   ended, and its handle may name a later link now (Core Vol 4 Part E §7.7.65.1);
    ///   `.server` when `valueHandle` is no characteristic value that can notify.
    @discardableResult
    public func notify(_ valueHandle: UInt16, value: [UInt8], to connection: Connection) throws(PeripheralError) -> Bool {
        let handle: UInt16
        do throws(StaleConnectionError) { handle = try liveHandle(of: connection) } catch { throw .staleConnection(error) }
        return try engineNotify(engineHost, valueHandle, value: value, to: handle).contains(handle)
    }

    /// Sends `value` in a Handle Value Notification (Core Vol 3 Part F §3.4.7.1) to every central
    /// subscribed to notifications of the characteristic at `valueHandle`, or to the link with the
    /// HCI handle `connection` only, if it is subscribed, cut to each link's ATT_MTU − 3 (Part G
    /// §4.10). Returns the handles of the links notified.
    ///
    /// The low-level form: a bare handle names whatever link has it when the call runs, and a
    /// controller may give a handle to a later link once the first one ends (Core Vol 4 Part E
    /// §7.7.65.1). To reach one central, prefer `notify(_:value:to:)` with a `Connection`
    /// (`PeripheralEvent.connected`, `connection(handle:)`), which refuses a link that has ended.
    @discardableResult
    public func notify(_ valueHandle: UInt16, value: [UInt8], to connection: UInt16? = nil) throws(PeripheralError) -> [UInt16] {
        try engineNotify(engineHost, valueHandle, value: value, to: connection)
    }

    /// Sends `value` in a Handle Value Indication (Core Vol 3 Part F §3.4.7.2) to `connection`, if
    /// its central is subscribed to indications of the characteristic at `valueHandle`, and returns
    /// once it has confirmed it or cannot any more (the outcome names the link by its handle).
    ///
    /// A central has at most one indication outstanding (§3.3.2): while one waits for its
    /// confirmation, later ones wait in the server's queue, which is bounded
    /// (`GATTServerConfiguration.maximumQueuedIndications`); a value that finds it full is dropped and
    /// reported as `.queueFull`. An unconfirmed indication times out after 30 s and the link is
    /// dropped (§3.3.3).
    ///
    /// - Throws: `.staleConnection` when `connection` is not a live link of this host (Core Vol 4
    ///   Part E §7.7.65.1); `.server` when `valueHandle` is no characteristic value that can indicate.
    @discardableResult
    public func indicate(_ valueHandle: UInt16, value: [UInt8], to connection: Connection) async throws(PeripheralError) -> IndicationOutcome {
        let handle: UInt16
        do throws(StaleConnectionError) { handle = try liveHandle(of: connection) } catch { throw .staleConnection(error) }
        return try await engineIndicate(engineHost, valueHandle, value: value, to: handle)
    }

    /// Sends `value` in a Handle Value Indication (Core Vol 3 Part F §3.4.7.2) to every central
    /// subscribed to indications of the characteristic at `valueHandle` (or to the link with the HCI
    /// handle `connection` only), and returns once each has confirmed it or cannot any more.
    ///
    /// A central has at most one indication outstanding (§3.3.2): while one waits for its
    /// confirmation, later ones wait in the server's queue, which is bounded
    /// (`GATTServerConfiguration.maximumQueuedIndications`); a value that finds it full is dropped and
    /// reported as `.queueFull`. An unconfirmed indication times out after 30 s and the link is
    /// dropped (§3.3.3).
    ///
    /// The low-level form for one central: a bare handle names whatever link has it when the call
    /// runs (Core Vol 4 Part E §7.7.65.1). Prefer `indicate(_:value:to:)` with a `Connection`.
    @discardableResult
    public func indicate(_ valueHandle: UInt16, value: [UInt8], to connection: UInt16? = nil) async throws(PeripheralError) -> IndicationOutcome {
        try await engineIndicate(engineHost, valueHandle, value: value, to: connection)
    }

    /// The server's subscriptions to the characteristic at `valueHandle`, one per subscribed central.
    public func subscriptions(of valueHandle: UInt16) -> [GATTSubscription] {
        engineSubscriptions(engineHost, of: valueHandle)
    }

    /// What the server and the link hold for one central, to check that no central can make it grow
    /// without bound.
    ///
    /// - Throws: when `connection` is not a live link of this host: its link ended, and its handle
    ///   may name a later link now (Core Vol 4 Part E §7.7.65.1).
    public func serverState(for connection: Connection) throws(StaleConnectionError) -> PeripheralConnectionState {
        let handle = try liveHandle(of: connection)
        guard let state = engineServerState(engineHost, for: handle) else {
            throw StaleConnectionError(connection: connection, reason: .ended(endedReason(handle)))
        }
        return state
    }

    /// What the server and the link with the HCI handle `connection` hold, or nil when no link has
    /// that handle.
    ///
    /// The low-level form: a bare handle names whatever link has it now, which may be a later link
    /// than the one it was taken from (Core Vol 4 Part E §7.7.65.1). Prefer
    /// `serverState(for:)` with a `Connection`.
    public func serverState(for connection: UInt16) -> PeripheralConnectionState? {
        engineServerState(engineHost, for: connection)
    }

    /// How many connections the GATT server holds state for.
    public var serverConnectionCount: Int {
        engineServerConnectionCount(engineHost)
    }
}

/// A snapshot of what the Host holds for one central (`BluetoothHost.serverState(for:)`).
public struct PeripheralConnectionState: Sendable, Hashable {
    /// The ATT_MTU in force.
    public var mtu: Int
    /// Prepare Write Requests queued (bounded by `GATTServerConfiguration.maximumPreparedWrites`).
    public var preparedWrites: Int
    /// Indications waiting behind the outstanding one.
    public var queuedIndications: Int
    public var indicationOutstanding: Bool
    /// CCCDs this central has set (bounded by the number of CCCDs in the database).
    public var subscriptions: Int
    /// `indicate` calls waiting for this central.
    public var pendingIndicationCalls: Int
    /// ACL fragments waiting for controller buffers.
    public var queuedACLPackets: Int
    /// Requests of the local client waiting on this link.
    public var bearerPendingRequests: Int
}
