import BluewireCore

/// Bytes from hex text such as "04 0e 04 01 03 0c 00"; an invalid literal gives an empty array
/// (and every test using one would then fail its first expectation).
func bytes(_ text: String) -> [UInt8] { parseHex(text) ?? [] }

/// The event payload (after the H4 byte) of a captured H4 event record like "040e0401030c00".
func eventPayload(_ h4Hex: String) -> [UInt8] { Array(bytes(h4Hex).dropFirst()) }
