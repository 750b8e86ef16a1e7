import Bluewire
import BluewireCore
import Testing

/// The arithmetic of a throughput run: sequence numbers to lost and out-of-order counts, round trips
/// to percentiles, the sink report's encoding, goodput.
@Suite("Throughput measurement")
struct ThroughputMeasurementTests {
    func tracked(_ sequences: [UInt32], first: UInt32 = 0) -> ThroughputSequenceTracker {
        var tracker = ThroughputSequenceTracker(firstSequence: first)
        for sequence in sequences { tracker.record(sequence: sequence, octets: 10) }
        return tracker
    }

    @Test("packets in order: nothing lost, nothing out of order")
    func inOrder() {
        let tracker = tracked(Array(0..<100))
        #expect(tracker.packets == 100 && tracker.octets == 1_000)
        #expect(tracker.lost == 0 && tracker.outOfOrder == 0)
        #expect(tracker.nextExpected == 100)
    }

    @Test("a gap counts its packets as lost; the first packet missing counts too")
    func gapsAreLost() {
        #expect(tracked([0, 1, 5, 6, 9]).lost == 5, "2, 3, 4, 7, 8")
        #expect(tracked([3, 4]).lost == 3, "0, 1, 2 never arrived")
    }

    @Test("a packet from a gap arriving late is out of order and no longer lost")
    func latePacketsAreOutOfOrder() {
        let tracker = tracked([0, 1, 3, 2, 4])
        #expect(tracker.outOfOrder == 1)
        #expect(tracker.lost == 0)
        let swapped = tracked([1, 0, 3, 2])
        #expect(swapped.outOfOrder == 2 && swapped.lost == 0)
    }

    @Test("sequence numbers wrap at 2^32 without a loss")
    func wrapAround() {
        let tracker = tracked([UInt32.max - 1, UInt32.max, 0, 1], first: UInt32.max - 1)
        #expect(tracker.lost == 0 && tracker.outOfOrder == 0 && tracker.nextExpected == 2)
    }

    @Test("latency percentiles are nearest-rank over the samples, in any order")
    func percentiles() throws {
        let samples = (1...100).reversed().map { TimeSpan.microseconds(Int64($0) * 10) }
        let latency = try #require(LatencyPercentiles(samples))
        #expect(latency.samples == 100)
        #expect(latency.minimum == .microseconds(10) && latency.maximum == .microseconds(1_000))
        #expect(latency.p50 == .microseconds(500) && latency.p90 == .microseconds(900) && latency.p99 == .microseconds(990))
        let one = try #require(LatencyPercentiles([.microseconds(7)]))
        #expect(one.p50 == .microseconds(7) && one.p99 == .microseconds(7))
        #expect(LatencyPercentiles([]) == nil)
    }

    @Test("the sink report is 20 octets, little-endian, and decodes to what was encoded")
    func sinkReportRoundTrip() throws {
        let report = ThroughputSinkReport(packets: 0x0102_0304, octets: 0x0000_0506_0708_090A, lost: 3, outOfOrder: 4)
        let bytes = report.encode()
        #expect(bytes.count == ThroughputSinkReport.encodedLength)
        #expect(Array(bytes[0..<4]) == [0x04, 0x03, 0x02, 0x01])
        #expect(Array(bytes[4..<12]) == [0x0A, 0x09, 0x08, 0x07, 0x06, 0x05, 0x00, 0x00])
        #expect(ThroughputSinkReport(decoding: bytes) == report)
        #expect(ThroughputSinkReport(decoding: Array(bytes.dropLast())) == nil)
    }

    @Test("packets carry their sequence number little-endian in the first four octets")
    func packetLayout() {
        let packet = ThroughputProfile.packet(sequence: 0xA1B2_C3D4, length: 8)
        #expect(packet == [0xD4, 0xC3, 0xB2, 0xA1, 0, 0, 0, 0])
        #expect(ThroughputProfile.sequence(of: packet[...]) == 0xA1B2_C3D4)
        #expect(ThroughputProfile.sequence(of: [1, 2, 3][...]) == nil)
        #expect(ThroughputProfile.packet(sequence: 1, length: 2).count == 4, "never shorter than the sequence number")
    }

    @Test("the profile's UUIDs are the documented ones")
    func profileUUIDs() {
        #expect(ThroughputProfile.service.uuidString == "B1E3E000-7A55-4C3E-9F1B-2D6C8A4E5F00")
        #expect(ThroughputProfile.stream.uuidString == "B1E3E001-7A55-4C3E-9F1B-2D6C8A4E5F00")
        #expect(ThroughputProfile.sink.uuidString == "B1E3E002-7A55-4C3E-9F1B-2D6C8A4E5F00")
        #expect(ThroughputProfile.sinkReport.uuidString == "B1E3E003-7A55-4C3E-9F1B-2D6C8A4E5F00")
    }

    @Test("goodput counts value octets over the elapsed time in kbit/s")
    func goodput() {
        let report = ThroughputReport(mode: .notify, mtu: 247, payloadLength: 244, elapsed: .seconds(2), packets: 1_000, octets: 244_000)
        #expect(report.kilobitsPerSecond == 976)
        #expect(report.packetsPerSecond == 500)
        #expect(ThroughputReport.kilobitsPerSecond(octets: 1, over: .zero) == 0)
    }
}
