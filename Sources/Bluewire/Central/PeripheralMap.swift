import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine

/// A central's map of several peripherals, keyed by address, as a CoreBluetooth-style SDK keeps
/// one: it scans for advertisers matching a filter, connects to each (up to a limit), exchanges the
/// MTU, discovers its services and characteristics, and reports each step on `events`, so that an
/// application can start talking to each peripheral as soon as *that one* is ready instead of
/// waiting for all of them or managing several connections by hand.
///
/// ```swift
/// let map = PeripheralMap(host: host, options: .init(filter: AdvertisingFilter(serviceUUIDs: [service]), limit: 3))
/// try await map.start()
/// for await event in map.events {
///     if case .ready(let peripheral) = event {
///         let value = try await peripheral.characteristic(uuid).read()
///     }
/// }
/// ```
///
/// Connections are made one after another: a controller accepts one LE Create Connection at a time
/// (Core Vol 4 Part E §7.8.12), and `EngineHost.connect` stops the scan first, so the map scans
/// until it has found `limit` advertisers (or `scanDuration` is over) and then connects. Each
/// entry's MTU exchange and discovery runs while the next one connects. A link that drops later is
/// reported with its reason; the other entries are left as they are.
public actor PeripheralMap {
    /// What to look for and how many.
    public struct Options: Sendable {
        /// Which advertisers to map (service UUIDs, name prefix, addresses).
        public var filter: AdvertisingFilter
        /// The most peripherals to map; the scan stops as soon as this many are found.
        public var limit: Int
        /// How long to scan at most.
        public var scanDuration: TimeSpan
        public var scanParameters: ScanParameters
        /// How long each connection attempt may take (nil: the Host's `connectionTimeout`).
        public var connectTimeout: TimeSpan?
        /// Services required, in the database discovered whole (an entry without one fails with
        /// `.serviceMissing`); nil maps every primary service.
        public var services: [BluetoothUUID]?
        /// Whether to exchange ATT MTUs before discovery (Core Vol 3 Part G §4.3.1), so that
        /// notifications and reads carry more than 20 octets of value.
        public var exchangeMTU: Bool

        public init(
            filter: AdvertisingFilter, limit: Int = 3, scanDuration: TimeSpan = .seconds(5),
            scanParameters: ScanParameters = ScanParameters(), connectTimeout: TimeSpan? = nil,
            services: [BluetoothUUID]? = nil, exchangeMTU: Bool = true
        ) {
            self.filter = filter
            self.limit = max(1, limit)
            self.scanDuration = scanDuration
            self.scanParameters = scanParameters
            self.connectTimeout = connectTimeout
            self.services = services
            self.exchangeMTU = exchangeMTU
        }
    }

    public nonisolated let host: EngineHost
    public nonisolated let options: Options
    /// Everything that happens to the map, in order (see `PeripheralMapEvent`); one consumer. It
    /// buffers without bound until iterated, so no event is lost between `start()` and the first
    /// `next()`, and finishes after `close()`.
    public nonisolated let events: AsyncStream<PeripheralMapEvent>
    private let continuation: AsyncStream<PeripheralMapEvent>.Continuation

    private var table: [BluetoothAddress: MappedPeripheral] = [:]
    private var order: [BluetoothAddress] = []
    private var run: Task<Void, Never>?
    private var watchers: [BluetoothAddress: Task<Void, Never>] = [:]
    private var closed = false

    public init(host: EngineHost, options: Options) {
        self.host = host
        self.options = options
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// A map over `host`'s engine (the links are the engine's; `host` sees them as its own).
    public init(host: BluetoothHost, options: Options) {
        self.init(host: host.engineHost, options: options)
    }

    /// The entries, in the order they were found.
    public var entries: [MappedPeripheral] { order.compactMap { table[$0] } }

    /// The entry for `address`, if the map has one.
    public subscript(address: BluetoothAddress) -> MappedPeripheral? { table[address] }

    /// The entries that are ready now.
    public var ready: [MappedPeripheral] { entries.filter { $0.state == .ready } }

    /// Starts scanning, then connects to what it found; returns at once (progress comes as events).
    /// - Throws: `.alreadyStarted` on a second call.
    public func start() throws(PeripheralMapError) {
        guard run == nil, !closed else { throw .alreadyStarted }
        run = Task { await self.scanThenConnect() }
    }

    /// Maps the peripherals at `addresses` without scanning (the caller knows them): `scanFinished`
    /// comes first, naming them, then each one connects as after a scan. `limit` does not apply.
    /// - Throws: `.alreadyStarted` on a second call.
    public func start(addresses: [BluetoothAddress]) throws(PeripheralMapError) {
        guard run == nil, !closed else { throw .alreadyStarted }
        var unique: [BluetoothAddress] = []
        for address in addresses where !unique.contains(address) { unique.append(address) }
        for address in unique { add(MappedPeripheral(address: address, advertisement: nil)) }
        emit(.scanFinished(found: unique, error: nil))
        run = Task { await self.connectAll(unique) }
    }

    /// Stops scanning or connecting, disconnects every mapped link and finishes `events`.
    public func close() async {
        guard !closed else { return }
        closed = true
        run?.cancel()
        for watcher in watchers.values { watcher.cancel() }
        watchers.removeAll()
        for address in order {
            guard let connection = table[address]?.connection, await connection.isConnected else { continue }
            _ = try? await connection.disconnect(reason: .remoteUserTerminatedConnection)
        }
        continuation.finish()
    }

    // MARK: The pass

    private func scanThenConnect() async {
        var found: [BluetoothAddress] = []
        var failure: PeripheralMapError?
        var iterator = await host.scan(
            filter: options.filter, parameters: options.scanParameters, duration: options.scanDuration
        ).makeAsyncIterator()
        do throws(HostEngineError) {
            while let device = try await iterator.next() {
                if closed || Task.isCancelled { break }
                if table[device.address] != nil {
                    table[device.address]?.advertisement = device
                    if let name = device.name { table[device.address]?.name = name }
                    continue
                }
                add(MappedPeripheral(address: device.address, advertisement: device))
                found.append(device.address)
                emit(.discovered(device))
                if found.count >= options.limit { break }
            }
        } catch {
            failure = .scan(error)
        }
        // Stopped here rather than by dropping the iterator, so the controller has stopped
        // scanning before the first LE Create Connection.
        await host.stopScan()
        emit(.scanFinished(found: found, error: failure))
        await connectAll(found)
    }

    private func connectAll(_ addresses: [BluetoothAddress]) async {
        for address in addresses {
            if closed || Task.isCancelled { return }
            table[address]?.state = .connecting
            emit(.connecting(address))
            let connection: EngineConnection
            do throws(HostEngineError) {
                connection = try await host.connect(to: address, timeout: options.connectTimeout)
            } catch {
                table[address]?.state = .failed
                emit(.failed(address, .connect(address, error)))
                continue
            }
            table[address]?.connection = connection
            table[address]?.state = .discovering
            if closed {
                _ = try? await connection.disconnect(reason: .remoteUserTerminatedConnection)
                return
            }
            watchers[address] = Task { await self.watch(connection) }
        }
    }

    /// Discovers the entry's database, then waits for its link to end.
    private func watch(_ connection: EngineConnection) async {
        let address = connection.peer
        let gatt = await connection.gatt
        do throws(PeripheralMapError) {
            let (mtu, services) = try await discover(gatt, address: address)
            guard table[address]?.state == .discovering else { return }
            table[address]?.mtu = mtu
            table[address]?.services = services
            table[address]?.state = .ready
            if let entry = table[address] { emit(.ready(entry)) }
        } catch {
            // A link that dropped during discovery is reported as a disconnection below.
            if !error.isDisconnection, table[address]?.state == .discovering {
                table[address]?.state = .failed
                emit(.failed(address, error))
                _ = try? await connection.disconnect(reason: .remoteUserTerminatedConnection)
                return
            }
        }
        let reason = await connection.disconnection()
        guard !closed, table[address]?.state != .failed else { return }
        table[address]?.state = .disconnected(reason)
        emit(.disconnected(address, reason: reason))
    }

    private func discover(_ gatt: EngineGATTClient, address: BluetoothAddress) async throws(PeripheralMapError) -> (Int, [MappedService]) {
        var database: [DiscoveredService] = [], services: [DiscoveredService] = [], missing: BluetoothUUID?, mtu = 23
        do throws(GATTError) {
            mtu = try await exchangeMTU(gatt)
            // The whole database in one engine request; then the services asked for, in that order.
            database = try await gatt.discoverAll()
        } catch {
            throw .discovery(address, error)
        }
        if let wanted = options.services {
            for uuid in wanted where missing == nil {
                if let service = database.first(where: { $0.service.uuid == uuid }) { services.append(service) } else { missing = uuid }
            }
        } else {
            services = database
        }
        if let missing { throw .serviceMissing(address, missing) }
        var mapped: [MappedService] = []
        for service in services {
            mapped.append(MappedService(
                peripheral: address, service: service.service,
                characteristics: service.characteristics.map { MappedCharacteristic(characteristic: $0.characteristic, gatt: gatt) }))
        }
        return (mtu, mapped)
    }

    /// The ATT_MTU after an exchange (if the options ask for one). A server may refuse the exchange
    /// (Request Not Supported): then 23 stays in force; only a lost link fails.
    private func exchangeMTU(_ gatt: EngineGATTClient) async throws(GATTError) -> Int {
        guard options.exchangeMTU else { return await gatt.mtu }
        do throws(GATTError) {
            return try await gatt.exchangeMTU()
        } catch {
            if error.isDisconnection { throw error }
            return await gatt.mtu
        }
    }

    private func add(_ entry: MappedPeripheral) {
        table[entry.address] = entry
        order.append(entry.address)
    }

    private func emit(_ event: PeripheralMapEvent) {
        continuation.yield(event)
    }
}
