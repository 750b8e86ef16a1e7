import BluewireCore
import BluewireHCI
import BluewireL2CAP

// The K-frame reassembler of credit based channels (Core Vol 3 Part A §3.4.3), fed hostile K-frames.
//
// Input: two configuration bytes (MTU = 23 + 4 × first, MPS = 23 + second), then length-prefixed
// K-frame payloads.
//
// Invariants checked (never a trap):
// - a complete SDU is never longer than the MTU, and took at least ⌈(n + 2) / MPS⌉ K-frames;
// - the octets held never exceed the MTU;
// - a breach is reported exactly when the spec calls for one (checked by a model alongside);
// - every complete SDU, segmented again with KFrameSegmenter, reassembles to the same bytes.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let mtu = 23 + 4 * Int(input.byte())
    let mps = 23 + Int(input.byte())
    var reassembler = KFrameReassembler(mtu: mtu, mps: mps)
    var expected: Int?
    var held = 0
    var frames = 0
    while !input.isAtEnd {
        let payload = input.lengthPrefixed()
        // The model: what the specification says this frame does.
        var breach = payload.count > mps
        var data = payload.count
        if !breach && expected == nil {
            if payload.count < 2 {
                breach = true
            } else {
                let length = Int(payload[payload.startIndex]) | Int(payload[payload.startIndex + 1]) << 8
                breach = length > mtu
                expected = length
                data -= 2
            }
        }
        if !breach, let total = expected, held + data > total { breach = true }
        do {
            let sdu = try reassembler.receive(payload)
            require(!breach, "breach not reported")
            frames += 1
            held += data
            if let sdu {
                require(sdu.bytes.count == expected && sdu.bytes.count <= mtu, "SDU of \(sdu.bytes.count) octets")
                require(sdu.kFrames == frames, "SDU took \(sdu.kFrames) frames, \(frames) seen")
                require(sdu.kFrames >= KFrameSegmenter.kFrameCount(sduLength: sdu.bytes.count, mps: mps), "too few K-frames")
                checkRoundTrip(sdu.bytes, mtu: mtu, mps: mps)
                expected = nil
                held = 0
                frames = 0
            }
            require(reassembler.bufferedCount <= mtu, "holds \(reassembler.bufferedCount) octets over MTU \(mtu)")
        } catch {
            require(breach, "breach \(error) reported for a valid K-frame")
            return 0
        }
    }
    return 0
}

func checkRoundTrip(_ sdu: [UInt8], mtu: Int, mps: Int) {
    var segmenter = KFrameSegmenter(mps: mps)
    segmenter.start(sdu[...])
    var fresh = KFrameReassembler(mtu: mtu, mps: mps)
    var out: KFrameReassembler.SDU?
    while let frame = segmenter.nextKFrame() {
        require(out == nil, "SDU completed before its last K-frame")
        require(frame.count <= mps, "segment over MPS")
        do { out = try fresh.receive(frame) } catch {
            require(false, "own segmentation breached: \(error)")
        }
    }
    require(out?.bytes == sdu, "re-segmented SDU differs")
}
