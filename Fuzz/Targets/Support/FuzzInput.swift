/// Splits a fuzzer input into the values a target needs (like LLVM's FuzzedDataProvider, but reading
/// from the front only). Running out of bytes yields zeros and empty slices, so every input is usable.
struct FuzzInput {
    let bytes: [UInt8]
    private(set) var index = 0

    init(_ data: UnsafePointer<UInt8>, _ size: Int) {
        bytes = Array(UnsafeBufferPointer(start: data, count: size))
    }

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { index >= bytes.count }
    var remainingCount: Int { bytes.count - index }

    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func uint16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }

    mutating func bool() -> Bool { byte() & 1 == 1 }

    /// Up to `count` bytes (fewer at the end of the input), as a slice of the input.
    mutating func take(_ count: Int) -> ArraySlice<UInt8> {
        let end = min(bytes.count, index + max(0, count))
        defer { index = end }
        return bytes[index..<end]
    }

    /// A chunk whose length is given by the next byte (0–255).
    mutating func lengthPrefixed() -> ArraySlice<UInt8> {
        take(Int(byte()))
    }

    /// A chunk whose length is given by the next two bytes, little-endian.
    mutating func lengthPrefixed16() -> ArraySlice<UInt8> {
        take(Int(uint16()))
    }

    mutating func rest() -> ArraySlice<UInt8> { take(remainingCount) }
}

/// Stops the fuzzer with a message when an invariant does not hold: libFuzzer records the input
/// as a crash like any trap.
@inline(never)
func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
             file: StaticString = #fileID, line: UInt = #line) {
    if !condition() {
        fatalError("invariant violated: \(message())", file: file, line: line)
    }
}
