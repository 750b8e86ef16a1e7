import Bluewire
import BluewireCore
import BluewireGATT
import BluewireTesting

/// Two Bluewire stacks on a `VirtualLink` without radio timing, one streaming notifications to the
/// other: the whole host path on both sides (GATT server → ATT bearer → L2CAP fragmentation → ACL
/// credits → virtual controllers → reassembly → ATT → the subscriber's `AsyncSequence`, and Number Of
/// Completed Packets back), in wall-clock time.
///
/// The peripheral streams with `BluetoothHost.streamSequencedNotifications` (what `bluewire serve
/// --throughput` runs) at ATT_MTU 517, so each notification carries 512 octets; the central counts
/// them from `GATTClient.subscribe`. Used by the `VirtualLinkGoodput` benchmark and by the
/// `GoodputProfile` driver (a plain executable to run under perf or heaptrack).
public final class NotificationStream: @unchecked Sendable {
    // @unchecked: set up once before the iterations, then used by one benchmark task at a time.
    public let scene: (clock: TestClock, central: BluetoothHost, peripheral: BluetoothHost)
    public let stream: UInt16
    public let connection: UInt16
    var notifications: CharacteristicSubscription.AsyncIterator

    public init(configuration: VirtualController.Configuration? = nil) async throws {
        let pair = try await ThroughputPair(configuration: configuration)
        let gatt = await pair.connection.gatt
        let characteristics = try await gatt.discoverAll().flatMap(\.characteristics).map(\.characteristic)
        guard let streamCharacteristic = characteristics.first(where: { $0.uuid == ThroughputProfile.stream }) else {
            throw BenchmarkSetupError.noStream
        }
        notifications = try await gatt.subscribe(to: streamCharacteristic).makeAsyncIterator()
        scene = (pair.clock, pair.central, pair.peripheral)
        stream = pair.peer.handles.stream
        connection = pair.served.handle
    }

    /// Streams `count` notifications and returns the octets the central received.
    public func move(_ count: Int) async throws -> Int {
        let peripheral = scene.peripheral, stream = self.stream, connection = self.connection
        async let sent = peripheral.streamSequencedNotifications(stream, to: connection, limit: count)
        var received = 0, octets = 0
        while received < count, let notification = try await notifications.next() {
            received += 1
            octets += notification.value.count
        }
        _ = await sent
        return octets
    }
}

extension NotificationStream {
    /// 1,024-octet × 16 ACL buffers, whole L2CAP PDUs delivered to the host (the fast variant).
    public static var wholePDUConfiguration: VirtualController.Configuration {
        var whole = VirtualController.Configuration(publicAddress: BluetoothAddress(0x00, 0x1B, 0xDC, 0x60, 0x00, 0x00))
        whole.aclDelivery = .wholeL2CAPPDUs
        whole.leBufferSize = VirtualController.BufferSize(packetLength: 1_024, packetCount: 16)
        return whole
    }
}

/// Two Bluewire hosts on a `VirtualLink` without radio timing, the peripheral serving `ThroughputPeer`
/// and the central connected to it: ATT_MTU exchanged (517 offered) and 251-octet link-layer packets
/// both ways, as a throughput peer asks for.
struct ThroughputPair {
    let clock: TestClock
    let central: BluetoothHost
    let peripheral: BluetoothHost
    let peer: ThroughputPeer
    /// The central's side of the link, and the peripheral's.
    let connection: Connection
    let served: Connection

    init(configuration: VirtualController.Configuration? = nil) async throws {
        clock = TestClock()
        let link = VirtualLink(clock: clock, timing: .immediate)
        func controller(_ last: UInt8) -> VirtualController {
            var config = configuration ?? VirtualController.Configuration(publicAddress: BluetoothAddress(0x00, 0x1B, 0xDC, 0x60, 0x00, last))
            config.publicAddress = BluetoothAddress(0x00, 0x1B, 0xDC, 0x60, 0x00, last)
            return link.addController(config)
        }
        central = BluetoothHost(
            transport: VirtualTransport(controller: controller(1)),
            configuration: HostConfiguration(randomAddress: .randomStatic(0x6001)), clock: clock)
        peripheral = BluetoothHost(
            transport: VirtualTransport(controller: controller(2)),
            configuration: HostConfiguration(randomAddress: .randomStatic(0x6002)), clock: clock)
        try await central.start()
        try await peripheral.start()
        peer = try ThroughputPeer()
        await peripheral.setDatabase(peer.database)
        try await peripheral.startAdvertising(try Advertisement(name: "Goodput", services: [ThroughputProfile.service]))
        connection = try await central.connect(to: .randomStatic(0x6002))
        try await connection.gatt.exchangeMTU()
        guard let served = await peripheral.connections.first else { throw BenchmarkSetupError.noConnection }
        try await served.requestDataLength()
        self.served = served
    }
}

public enum BenchmarkSetupError: Error { case noConnection, noStream, lost(sent: Int, received: Int) }
