import BluewireCore
import Synchronization

/// What the throughput peer's sink has counted for one connection: the value of the sink report
/// characteristic.
///
/// Encoded little-endian in 20 octets, so that it fits one Read Response at the default ATT_MTU of 23:
/// packets (UInt32), octets (UInt64), lost (UInt32), out of order (UInt32).
public struct ThroughputSinkReport: Sendable, Hashable {
    public var packets: Int
    public var octets: Int
    public var lost: Int
    public var outOfOrder: Int

    public init(packets: Int, octets: Int, lost: Int, outOfOrder: Int) {
        self.packets = packets
        self.octets = octets
        self.lost = lost
        self.outOfOrder = outOfOrder
    }

    init(_ tracker: ThroughputSequenceTracker) {
        self.init(packets: tracker.packets, octets: tracker.octets, lost: tracker.lost, outOfOrder: tracker.outOfOrder)
    }

    /// Octets of the encoded report.
    public static let encodedLength = 20

    /// The characteristic value (counts above their field's range saturate).
    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.encodedLength)
        writer.append(UInt32(clamping: packets))
        writer.append(UInt64(clamping: octets))
        writer.append(UInt32(clamping: lost))
        writer.append(UInt32(clamping: outOfOrder))
        return writer.bytes
    }

    /// Decodes a sink report value; nil if it is not 20 octets long.
    public init?(decoding value: [UInt8]) {
        guard value.count == Self.encodedLength else { return nil }
        var reader = ByteReader(value)
        guard let packets = try? reader.readUInt32("packets"),
              let octets = try? reader.readUInt64("octets"),
              let lost = try? reader.readUInt32("lost"),
              let outOfOrder = try? reader.readUInt32("outOfOrder") else { return nil }
        self.init(packets: Int(packets), octets: Int(clamping: octets), lost: Int(lost), outOfOrder: Int(outOfOrder))
    }
}

/// The sink's counters, one tracker per connection. Its handlers run on the Host's executor (inside
/// the GATT server); the lock lets the peer read the counters from anywhere.
final class ThroughputSink: Sendable {
    private let trackers = Mutex<[UInt16: ThroughputSequenceTracker]>([:])
    /// Told of each reset, on the host's executor (`ThroughputPeer.serve(on: EngineHost ...)`: the
    /// engine reports no event for a write its handler took).
    private let resetObserver = Mutex<(@Sendable (UInt16) -> Void)?>(nil)

    func observeResets(_ observer: (@Sendable (UInt16) -> Void)?) {
        resetObserver.withLock { $0 = observer }
    }

    /// A packet written to the sink; one too short to carry a sequence number is counted as the
    /// next one in order, so its octets still count.
    func received(_ value: [UInt8], on connection: UInt16) {
        trackers.withLock { trackers in
            var tracker = trackers[connection] ?? ThroughputSequenceTracker()
            let sequence = ThroughputProfile.sequence(of: value[...]) ?? tracker.nextExpected
            tracker.record(sequence: sequence, octets: value.count)
            trackers[connection] = tracker
        }
    }

    func reset(_ connection: UInt16) {
        trackers.withLock { $0[connection] = ThroughputSequenceTracker() }
        resetObserver.withLock { $0 }?(connection)
    }

    func report(for connection: UInt16) -> ThroughputSinkReport {
        ThroughputSinkReport(trackers.withLock { $0[connection] } ?? ThroughputSequenceTracker())
    }

    /// Takes the counters of a connection that ended.
    func remove(_ connection: UInt16) -> ThroughputSinkReport? {
        trackers.withLock { $0.removeValue(forKey: connection) }.map(ThroughputSinkReport.init)
    }
}
