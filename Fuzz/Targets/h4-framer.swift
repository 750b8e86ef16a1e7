import BluewireCore
import BluewireTransport

// The H4 framer, fed the byte stream of a UART or a TCP/Unix socket in reads of any size.
//
// Input: one byte choosing how the stream is cut into reads, then the stream. Read sizes come from a
// small generator seeded by that byte (1 to 300 bytes, some 1-byte reads), so packet headers and
// payloads straddle reads in every way. Seed bytes 0xF0 and up also lower the framer's maximum
// payload to 259 bytes.
//
// Invariants checked (never a trap):
// - the packets and the error are the same whatever the read sizes: the stream framed in one read
//   gives the same result as the stream framed in pieces;
// - each packet is its H4 bytes: indicator, then a header whose length field matches the payload;
//   concatenated, the packets' h4Bytes are exactly the start of the stream (nothing lost, nothing
//   invented), and the stream offset counts them;
// - after an error every later call fails with the same error; `finish()` fails exactly when bytes
//   are left over, and reports how many are missing (at least one).

struct Framed: Equatable {
    var packets: [HCIPacket] = []
    var error: H4FramingError?
    var consumed = 0
}

func frame(_ stream: ArraySlice<UInt8>, maximum: Int, readSizes: inout SplitMix) -> Framed {
    var framer = H4Framer(maximumPayloadLength: maximum)
    var out = Framed()
    var index = stream.startIndex
    repeat {
        let size = readSizes.nextReadSize()
        let end = min(stream.endIndex, index + size)
        // A fresh array per read, as a transport delivers them.
        framer.append(Array(stream[index..<end]))
        index = end
        do {
            while let packet = try framer.nextPacket() {
                out.packets.append(HCIPacket(type: packet.type, payload: Array(packet.payload)))
            }
        } catch {
            out.error = error
            do {
                _ = try framer.nextPacket()
                require(false, "the framer recovered after \(error)")
            } catch {
                require(error == out.error, "a later call failed differently: \(error)")
            }
            break
        }
    } while index < stream.endIndex
    out.consumed = framer.streamOffset
    if out.error == nil {
        do {
            try framer.finish()
            require(framer.bufferedByteCount == 0, "finish() passed with \(framer.bufferedByteCount) bytes buffered")
        } catch {
            require(framer.bufferedByteCount > 0, "finish() failed with nothing buffered: \(error)")
            if case .endedMidPacket(let needed) = error.reason { require(needed >= 1, "ended mid-packet needing \(needed)") }
            _ = error.description
        }
    }
    return out
}

/// Read sizes from a seed byte (SplitMix64), so one input byte describes a whole cutting pattern.
struct SplitMix {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func nextReadSize() -> Int {
        let r = next()
        return r & 3 == 0 ? 1 : Int(1 + (r >> 8) % 300)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let seed = input.byte()
    let stream = input.rest()
    // A host that knows its controller's buffer sizes may lower the limit (259: the largest event).
    let maximum = seed >= 0xF0 ? 259 : 4 + 0xFFFF
    let oneRead = frameInOneRead(stream, maximum: maximum)
    var pieces = SplitMix(state: UInt64(seed))
    let split = frame(stream, maximum: maximum, readSizes: &pieces)
    require(oneRead.packets == split.packets && oneRead.error == split.error && oneRead.consumed == split.consumed,
            "framing depends on read sizes: \(oneRead.packets.count) packets/\(String(describing: oneRead.error)) whole, \(split.packets.count)/\(String(describing: split.error)) in pieces")
    var rebuilt: [UInt8] = []
    for packet in oneRead.packets {
        let bytes = packet.h4Bytes
        let length: Int
        switch packet.type {
        case .command: length = 3 + Int(bytes[3])
        case .acl: length = 4 + (Int(bytes[3]) | Int(bytes[4]) << 8)
        case .sco: length = 3 + Int(bytes[3])
        case .event: length = 2 + Int(bytes[2])
        case .iso: length = 4 + ((Int(bytes[3]) | Int(bytes[4]) << 8) & 0x3FFF)
        }
        require(packet.payload.count == length, "\(packet.type) packet of \(packet.payload.count) bytes, header says \(length)")
        rebuilt.append(contentsOf: bytes)
    }
    require(rebuilt[...] == stream.prefix(rebuilt.count), "packets are not the start of the stream")
    require(oneRead.consumed == rebuilt.count, "stream offset \(oneRead.consumed), packets cover \(rebuilt.count)")
    return 0
}

/// The stream framed from a single read.
func frameInOneRead(_ stream: ArraySlice<UInt8>, maximum: Int) -> Framed {
    var framer = H4Framer(maximumPayloadLength: maximum)
    var out = Framed()
    framer.append(stream)
    do {
        while let packet = try framer.nextPacket() {
            // Zero copy: a packet inside the read is a slice of it.
            require(packet.payload.isEmpty || (packet.payload.startIndex >= stream.startIndex && packet.payload.endIndex <= stream.endIndex),
                    "packet from a single read is not a slice of it")
            out.packets.append(HCIPacket(type: packet.type, payload: Array(packet.payload)))
        }
    } catch {
        out.error = error
    }
    out.consumed = framer.streamOffset
    return out
}
