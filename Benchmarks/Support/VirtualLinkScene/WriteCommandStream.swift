import Bluewire
import BluewireCore
import BluewireTesting

/// Two Bluewire stacks on a `VirtualLink` without radio timing, the central sending sequence-numbered
/// Write Commands to the other's throughput sink with `ThroughputClient` (its write-without-response
/// mode, which the host engine streams): the whole write path on both sides (the client's
/// sender → ACL credits → virtual controllers → reassembly → the peer's ATT server and sink, and
/// Number Of Completed Packets back), in wall-clock time.
///
/// Each `move(_:)` is one run of `count` writes of 512 octets (ATT_MTU 517): its discovery, the sink's
/// reset and the sink report's read are a fixed cost spread over the run's writes.
public final class WriteCommandStream: @unchecked Sendable {
    // @unchecked: set up once before the iterations, then used by one benchmark task at a time.
    public let scene: (clock: TestClock, central: BluetoothHost, peripheral: BluetoothHost)
    let connection: Connection

    public init() async throws {
        let pair = try await ThroughputPair()
        scene = (pair.clock, pair.central, pair.peripheral)
        connection = pair.connection
    }

    /// Sends `count` Write Commands and returns the octets the peer's sink counted.
    public func move(_ count: Int) async throws -> Int {
        let options = ThroughputOptions(mode: .writeWithoutResponse, duration: .seconds(86_400), packetLimit: count, exchangesMTU: false)
        let report = try await ThroughputClient(connection: connection).run(options)
        guard report.packets == count else { throw BenchmarkSetupError.lost(sent: count, received: report.packets) }
        return report.octets
    }
}
