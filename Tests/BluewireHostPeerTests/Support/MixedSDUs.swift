/// SDUs of mixed sizes totalling `octets` (Tests/Peers/bumble_coc.py `mixed_sdus`, octet for
/// octet): 1 octet, then `mtu`, then 1...mtu from an LCG (state × 1664525 + 1013904223 mod 2³²,
/// size 1 + (state >> 8) mod mtu), the last cut to fit; SDU k holds the octets (13k + i) mod 256.
struct MixedSDUs: Sequence, IteratorProtocol {
    let octets: Int
    let mtu: Int
    var state: UInt32
    var index = 0
    var total = 0

    init(seed: UInt32, octets: Int, mtu: Int) {
        self.state = seed
        self.octets = octets
        self.mtu = mtu
    }

    mutating func next() -> [UInt8]? {
        guard total < octets else { return nil }
        var size: Int
        switch index {
        case 0: size = 1
        case 1: size = mtu
        default:
            state = state &* 1_664_525 &+ 1_013_904_223
            size = 1 + Int(state >> 8) % mtu
        }
        size = Swift.min(size, octets - total)
        let offset = (index * 13) % 256
        let sdu = (0..<size).map { UInt8(truncatingIfNeeded: offset + $0) }
        total += size
        index += 1
        return sdu
    }
}
