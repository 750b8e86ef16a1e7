import BluewireCore
import BluewireHCI
import Testing

@testable import BluewireL2CAP

/// The host's send path builds each ACL packet's wire form directly
/// (`L2CAPFragmenter.forEachWirePacket`); it must be byte for byte what fragmenting and encoding
/// gives, for every buffer size, down to buffers that split the L2CAP header itself.
@Suite("L2CAP: packets built in wire form")
struct L2CAPWirePacketTests {
    static let bufferSizes = [1, 2, 3, 4, 5, 7, 8, 27, 251]
    static let payloadLengths = [0, 1, 3, 4, 5, 23, 27, 100, 300]

    /// A payload that is a slice starting past index 0, as the engine's slices of larger buffers are.
    static func payload(_ length: Int) -> ArraySlice<UInt8> {
        let base = (0..<(length + 9)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
        return base[5..<(5 + length)]
    }

    @Test("A payload and its channel: the same bytes as fragment(…) encoded, for every buffer size")
    func payloadMatchesFragmentEncoded() {
        for size in Self.bufferSizes {
            let fragmenter = L2CAPFragmenter(bufferSize: size)
            for length in Self.payloadLengths {
                let payload = Self.payload(length)
                var wire: [ACLWirePacket] = []
                fragmenter.forEachWirePacket(handle: 0x0041, channelID: .att, payload: payload) { wire.append($0) }
                let expected = fragmenter.fragment(handle: 0x0041, channelID: .att, payload: payload).map { $0.encode() }
                #expect(wire.map(\.bytes) == expected, "buffer \(size), payload \(length)")
            }
        }
    }

    @Test("An encoded frame: the same bytes as fragment(handle:frame:) encoded, for every buffer size")
    func frameMatchesFragmentEncoded() {
        for size in Self.bufferSizes {
            let fragmenter = L2CAPFragmenter(bufferSize: size)
            for length in Self.payloadLengths where length > 0 {
                let frame = Self.payload(length)
                var wire: [ACLWirePacket] = []
                fragmenter.forEachWirePacket(handle: 0x0EFF, frame: frame) { wire.append($0) }
                let expected = fragmenter.fragment(handle: 0x0EFF, frame: frame).map { $0.encode() }
                #expect(wire.map(\.bytes) == expected, "buffer \(size), frame \(length)")
            }
        }
    }

    @Test("A wire packet reads back the handle, boundary flag and data it was built from")
    func wirePacketAccessors() throws {
        for boundary in ACLPacketBoundaryFlag.allCases {
            let packet = ACLPacket(handle: 0x0ABC, packetBoundary: boundary, data: [9, 8, 7][...])
            let wire = ACLWirePacket(packet)
            #expect(wire.handle == 0x0ABC && wire.packetBoundary == boundary && Array(wire.data) == [9, 8, 7])
            #expect(try ACLPacket(decoding: wire.bytes) == packet)
        }
    }
}
