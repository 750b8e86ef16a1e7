import BluewireCore
import BluewireHCI
import Testing

@testable import BluewireL2CAP

/// `forEachWirePacket(handle:channelID:headroomed:_:)`, the engine's send path for ATT PDUs encoded
/// behind reserved headroom: byte for byte what the payload path gives, for every buffer size, and
/// with no copy of the payload when the frame fits one packet.
@Suite("L2CAP: packets from a payload behind reserved headroom")
struct L2CAPFragmenterHeadroomTests {
    static let bufferSizes = [1, 2, 3, 4, 5, 7, 8, 27, 251]
    static let payloadLengths = [0, 1, 3, 4, 5, 23, 27, 100, 300]

    static func headroomed(_ payload: [UInt8]) -> [UInt8] {
        [UInt8](repeating: 0, count: L2CAPFragmenter.headroom) + payload
    }

    @Test("The headroom is the ACL and the L2CAP basic header")
    func headroomIsBothHeaders() {
        #expect(L2CAPFragmenter.headroom == 8)
    }

    @Test("The same packets as forEachWirePacket(payload:), for every buffer size and payload length")
    func matchesThePayloadPath() {
        for size in Self.bufferSizes {
            let fragmenter = L2CAPFragmenter(bufferSize: size)
            for length in Self.payloadLengths {
                let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
                var expected: [[UInt8]] = []
                fragmenter.forEachWirePacket(handle: 0x0EFF, channelID: .att, payload: payload[...]) { expected.append($0.bytes) }
                var buffer = Self.headroomed(payload)
                var actual: [[UInt8]] = []
                fragmenter.forEachWirePacket(handle: 0x0EFF, channelID: .att, headroomed: &buffer) { actual.append($0.bytes) }
                #expect(actual == expected, "buffer \(size), payload \(length)")
            }
        }
    }

    @Test("A frame that fits one packet is the caller's own buffer: the payload is not copied")
    func oneFitsWithoutCopy() {
        let fragmenter = L2CAPFragmenter(bufferSize: 27)
        var buffer = Self.headroomed([0x12, 0x06, 0x00, 0x01, 0x02])
        let storage = buffer.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        var packets: [ACLWirePacket] = []
        fragmenter.forEachWirePacket(handle: 0x0040, channelID: .att, headroomed: &buffer) { packets.append($0) }
        #expect(packets.count == 1)
        #expect(packets.first?.bytes == [0x40, 0x00, 0x09, 0x00, 0x05, 0x00, 0x04, 0x00, 0x12, 0x06, 0x00, 0x01, 0x02])
        #expect(packets.first?.bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) } == storage)
    }

    @Test("A buffer shorter than the headroom carries an empty payload")
    func shortBufferIsAnEmptyPayload() {
        let fragmenter = L2CAPFragmenter(bufferSize: 27)
        var buffer: [UInt8] = [0, 0, 0]
        var packets: [[UInt8]] = []
        fragmenter.forEachWirePacket(handle: 0x0040, channelID: .att, headroomed: &buffer) { packets.append($0.bytes) }
        #expect(packets == [[0x40, 0x00, 0x04, 0x00, 0x00, 0x00, 0x04, 0x00]])
    }
}
