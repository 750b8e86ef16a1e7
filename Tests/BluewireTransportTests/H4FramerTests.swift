import BluewireCore
import Testing

@testable import BluewireTransport

/// One packet of each H4 type, with the length field at the offset Core Vol 4 Part A §2 gives.
private let vectors: [(type: HCIPacketType, bytes: [UInt8])] = [
    (.command, [0x01, 0x03, 0x0C, 0x00]),  // HCI Reset, no parameters
    (.command, [0x01, 0x01, 0x20, 0x08, 1, 2, 3, 4, 5, 6, 7, 8]),  // LE Set Event Mask
    (.event, [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]),  // Command Complete for Reset
    (.acl, [0x02, 0x40, 0x00, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x0A, 0x03, 0x00]),  // ATT Read Request
    (.sco, [0x03, 0x01, 0x00, 0x03, 0xAA, 0xBB, 0xCC]),
    (.iso, [0x05, 0x01, 0x20, 0x03, 0x00, 0x11, 0x22, 0x33]),
    (.event, [0x04, 0x13, 0x00]),  // an event with no parameters
]

private let stream: [UInt8] = vectors.flatMap(\.bytes)

private func drain(_ framer: inout H4Framer) throws(H4FramingError) -> [HCIPacket] {
    var packets: [HCIPacket] = []
    while let packet = try framer.nextPacket() { packets.append(packet) }
    return packets
}

private let expected = vectors.map { HCIPacket(type: $0.type, payload: Array($0.bytes.dropFirst())) }

@Suite("H4 framer")
struct H4FramerTests {
    @Test func wholeStreamInOneReadYieldsEveryPacketInOrder() throws {
        var framer = H4Framer()
        framer.append(stream)
        let packets = try drain(&framer)
        #expect(packets == expected)
        #expect(framer.bufferedByteCount == 0)
        #expect(framer.streamOffset == stream.count)
        try framer.finish()
    }

    @Test func streamSplitInTwoAtEveryByteBoundaryYieldsTheSamePackets() throws {
        for split in 0...stream.count {
            var framer = H4Framer()
            framer.append(Array(stream[..<split]))
            var packets = try drain(&framer)
            framer.append(Array(stream[split...]))
            packets += try drain(&framer)
            #expect(packets == expected, "split at \(split)")
            #expect(framer.bufferedByteCount == 0, "split at \(split)")
        }
    }

    @Test func streamFedOneByteAtATimeYieldsTheSamePackets() throws {
        var framer = H4Framer()
        var packets: [HCIPacket] = []
        for byte in stream {
            framer.append([byte])
            packets += try drain(&framer)
        }
        #expect(packets == expected)
    }

    @Test func everyPairOfSplitPointsYieldsTheSamePackets() throws {
        for first in 0...stream.count {
            for second in first...stream.count {
                var framer = H4Framer()
                var packets: [HCIPacket] = []
                for piece in [stream[..<first], stream[first..<second], stream[second...]] {
                    framer.append(Array(piece))
                    packets += try drain(&framer)
                }
                #expect(packets == expected, "splits at \(first), \(second)")
            }
        }
    }

    @Test func packetsWhollyInsideAReadShareTheReadsStorage() throws {
        var framer = H4Framer()
        let chunk = stream
        framer.append(chunk)
        let packets = try drain(&framer)
        chunk.withUnsafeBufferPointer { chunkBuffer in
            for packet in packets {
                packet.payload.withUnsafeBufferPointer { payload in
                    let inside = payload.baseAddress! >= chunkBuffer.baseAddress!
                        && payload.baseAddress! + payload.count <= chunkBuffer.baseAddress! + chunkBuffer.count
                    #expect(inside, "\(packet.type) payload was copied out of the read buffer")
                }
            }
        }
    }

    @Test func unknownPacketTypeIsATypedErrorWithTypeByteAndStreamOffset() {
        var framer = H4Framer()
        let garbage: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00, 0x42, 0x00, 0x00]
        framer.append(garbage)
        #expect(throws: Never.self) { _ = try framer.nextPacket() }
        #expect(throws: H4FramingError(.unknownPacketType, packetType: 0x42, offset: 7)) { _ = try framer.nextPacket() }
    }

    @Test func framerStaysFailedAfterAFramingError() {
        var framer = H4Framer()
        framer.append([0xFF])
        #expect(throws: H4FramingError.self) { _ = try framer.nextPacket() }
        framer.append([0x04, 0x13, 0x00])
        #expect(throws: H4FramingError(.unknownPacketType, packetType: 0xFF, offset: 0)) { _ = try framer.nextPacket() }
    }

    @Test func zeroIndicatorSplitAcrossReadsIsReportedAtItsOffset() throws {
        var framer = H4Framer()
        framer.append([0x04, 0x13])
        #expect(try framer.nextPacket() == nil)
        framer.append([0x00, 0x00])
        #expect(try framer.nextPacket() == HCIPacket(type: .event, payload: [0x13, 0x00]))
        #expect(throws: H4FramingError(.unknownPacketType, packetType: 0x00, offset: 3)) { _ = try framer.nextPacket() }
    }

    @Test func declaredLengthAboveTheMaximumIsATypedError() {
        var framer = H4Framer(maximumPayloadLength: 255)
        framer.append([0x04, 0x0E, 0x01, 0x00, 0x02, 0x01, 0x00, 0x00, 0x04])  // event, then ACL of 1024
        #expect(throws: Never.self) { _ = try framer.nextPacket() }
        #expect(throws: H4FramingError(.lengthTooLarge(declared: 4 + 0x0400, maximum: 255), packetType: 0x02, offset: 4)) {
            _ = try framer.nextPacket()
        }
    }

    @Test func isoLengthIgnoresTheReservedTopBits() throws {
        var framer = H4Framer()
        framer.append([0x05, 0x01, 0x00, 0x02, 0xC0, 0xAA, 0xBB])
        #expect(try framer.nextPacket() == HCIPacket(type: .iso, payload: [0x01, 0x00, 0x02, 0xC0, 0xAA, 0xBB]))
    }

    @Test func streamEndingInsideAPacketIsATypedErrorNamingTheMissingBytes() throws {
        var framer = H4Framer()
        framer.append([0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00, 0x02, 0x40, 0x00, 0x07, 0x00, 0x03])
        #expect(try framer.nextPacket() != nil)
        #expect(try framer.nextPacket() == nil)
        #expect(throws: H4FramingError(.endedMidPacket(needed: 6), packetType: 0x02, offset: 7)) { try framer.finish() }
    }

    @Test func streamEndingInsideAHeaderIsATypedError() throws {
        var framer = H4Framer()
        framer.append([0x02, 0x40])
        #expect(try framer.nextPacket() == nil)
        #expect(throws: H4FramingError(.endedMidPacket(needed: 3), packetType: 0x02, offset: 0)) { try framer.finish() }
    }

    @Test func pseudoRandomGarbageNeverTrapsAndEitherFramesOrFails() {
        // Deterministic xorshift so a failure reproduces.
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for round in 0..<500 {
            var bytes: [UInt8] = []
            for _ in 0..<(Int(seed % 300)) {
                seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17
                bytes.append(UInt8(truncatingIfNeeded: seed))
            }
            var framer = H4Framer()
            var consumed = 0
            var failed = false
            var cut = 0
            while cut < bytes.count {
                let step = min(bytes.count - cut, 1 + Int(seed % 37))
                framer.append(Array(bytes[cut..<(cut + step)]))
                cut += step
                do {
                    while let packet = try framer.nextPacket() { consumed += 1 + packet.payload.count }
                } catch {
                    failed = true
                    #expect(error.offset == consumed, "round \(round)")
                    break
                }
            }
            if !failed { #expect(consumed + framer.bufferedByteCount == bytes.count, "round \(round)") }
        }
    }
}
