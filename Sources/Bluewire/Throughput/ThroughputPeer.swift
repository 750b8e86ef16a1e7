import BluewireCore
import BluewireGATT
import BluewireHCI

/// Bluewire's throughput peer: the GATT server side of `ThroughputProfile`, as `bluewire serve
/// --throughput` runs it.
///
/// ```swift
/// let peer = try ThroughputPeer(name: "Bluewire Throughput")
/// await host.setDatabase(peer.database)
/// let events = await host.peripheralEvents()          // before advertising: no central is missed
/// try await host.startAdvertising(try Advertisement(name: "Bluewire Throughput", services: [ThroughputProfile.service]))
/// await peer.serve(on: host, events: events) { event in print(event) }
/// ```
///
/// A central that enables notifications of the stream characteristic gets sequence-numbered
/// notifications as fast as the controller takes them (`BluetoothHost.streamSequencedNotifications`)
/// until it disables them; writes to the sink are counted per connection; the sink report returns the
/// counts. Several centrals can do both at once.
public struct ThroughputPeer: Sendable {
    /// The database to serve: GAP (Device Name) and the throughput service.
    public let database: GATTDatabase
    /// Where the throughput characteristics are in it.
    public let handles: ThroughputHandles
    let sink: ThroughputSink

    /// Something the peer did or saw, for its operator.
    public enum Event: Sendable, Hashable {
        /// A peripheral event other than the sink's own writes (connections, MTU, subscriptions, reads...).
        case peripheral(PeripheralEvent)
        /// A central subscribed to the stream; notifications start.
        case streamStarted(connection: UInt16)
        /// The stream to a central ended (unsubscribed, disconnected, or replaced by a new subscription).
        case streamStopped(connection: UInt16, notifications: Int)
        /// A central reset its sink counters (wrote the sink report).
        case sinkReset(connection: UInt16)
        /// A central that wrote to the sink disconnected: what the sink counted for it since the last reset.
        case sinkTotals(connection: UInt16, ThroughputSinkReport)
    }

    /// Builds the database. `name` is the Device Name characteristic's value.
    public init(name: String = "Bluewire Throughput") throws(GATTDatabaseError) {
        let sink = ThroughputSink()
        var builder = GATTDatabaseBuilder()
        try builder.addService(.genericAccess)
        try builder.addCharacteristic(.deviceName, properties: [.read], permissions: [.read], value: .cached(Array(name.utf8)))
        try builder.addService(ThroughputProfile.service)
        let stream = try builder.addCharacteristic(ThroughputProfile.stream, properties: [.notify], permissions: [], value: .cached([]))
        let sinkHandles = try builder.addCharacteristic(
            ThroughputProfile.sink, properties: [.write, .writeWithoutResponse], permissions: [.write],
            value: .dynamic(GATTDynamicValue(write: { request throws(GATTAttributeError) in
                sink.received(request.value, on: request.connection)
            })))
        let report = try builder.addCharacteristic(
            ThroughputProfile.sinkReport, properties: [.read, .write], permissions: [.read, .write],
            value: .dynamic(GATTDynamicValue(
                read: { request throws(GATTAttributeError) in try request.part(of: sink.report(for: request.connection).encode()) },
                write: { request throws(GATTAttributeError) in sink.reset(request.connection) })))
        self.database = builder.build()
        self.sink = sink
        // The stream has Notify, so the builder gave it a CCCD.
        self.handles = ThroughputHandles(
            stream: stream.valueHandle, streamConfiguration: stream.clientConfigurationHandle ?? stream.valueHandle + 1,
            sink: sinkHandles.valueHandle, sinkReport: report.valueHandle)
    }

    /// What the sink has counted for `connection` since its last reset.
    public func sinkReport(for connection: UInt16) -> ThroughputSinkReport { sink.report(for: connection) }

    /// Runs the peer on `host` (serving `database`, set by the caller) from `events` (the host's
    /// `peripheralEvents()`): starts a stream for each subscription, reports through `onEvent`.
    /// Returns when `events` finishes (the Host closed) or the task is cancelled; streams still
    /// running are cancelled then.
    public func serve(
        on host: BluetoothHost, events: AsyncStream<PeripheralEvent>, onEvent: @escaping @Sendable (Event) -> Void = { _ in }
    ) async {
        var streams: [UInt16: Task<Void, Never>] = [:]
        defer { for task in streams.values { task.cancel() } }
        for await event in events {
            switch event {
            case .write(let write) where write.handle == handles.sink:
                // Counted by the sink's handler; one line per packet would swamp the operator.
                continue
            case .write(let write) where write.handle == handles.sinkReport:
                onEvent(.sinkReset(connection: write.connection))
                continue
            case .subscriptionChanged(let subscription) where subscription.valueHandle == handles.stream:
                onEvent(.peripheral(event))
                guard subscription.notifications else { continue }
                let connection = subscription.connection
                streams[connection]?.cancel()
                onEvent(.streamStarted(connection: connection))
                let stream = handles.stream
                streams[connection] = Task {
                    let sent = await host.streamSequencedNotifications(stream, to: connection)
                    onEvent(.streamStopped(connection: connection, notifications: sent))
                }
            case .connected(let connection):
                onEvent(.peripheral(event))
                // Notifications travel from this side: ask for 251-octet link-layer packets (LE Set Data
                // Length, Core Vol 4 Part E §7.8.33) instead of the 27 a link starts with. A controller
                // without Data Packet Length Extension, or one that refuses, keeps 27.
                Task {
                    guard await host.controller?.supportsDataLengthExtension == true else { return }
                    _ = try? await host.send(.leSetDataLength(LESetDataLength(connectionHandle: connection.handle)))
                }
            case .disconnected(let connection, _, _):
                onEvent(.peripheral(event))
                streams.removeValue(forKey: connection)
                if let totals = sink.remove(connection), totals.packets > 0 {
                    onEvent(.sinkTotals(connection: connection, totals))
                }
            default:
                onEvent(.peripheral(event))
            }
        }
    }
}
