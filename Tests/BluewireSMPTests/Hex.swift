/// Parses spec-style hex ("3f49f6d4 a3c55f38 ...") into octets, most significant first.
func hex(_ s: String) -> [UInt8] {
    let digits = s.filter { !$0.isWhitespace }.map { UInt8(String($0), radix: 16) ?? 0 }
    return stride(from: 0, to: digits.count - 1, by: 2).map { digits[$0] << 4 | digits[$0 + 1] }
}
