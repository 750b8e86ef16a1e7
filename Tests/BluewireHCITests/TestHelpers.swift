import BluewireHCI
import BluewireCore

/// Bytes from hex text such as "04 0e 04 01 03 0c 00"; an invalid literal gives an empty array
/// (and every test using one would then fail its first expectation).
func bytes(_ text: String) -> [UInt8] { parseHex(text) ?? [] }

/// The event payload (after the H4 byte) of a captured H4 event record like "040e0401030c00".
func eventPayload(_ h4Hex: String) -> [UInt8] { Array(bytes(h4Hex).dropFirst()) }

/// A Command Complete event payload answering `opcode` with `returnParameters` and one credit.
func commandCompletePayload(_ opcode: HCIOpcode, _ returnParameters: [UInt8], credits: UInt8 = 1) -> [UInt8] {
    [0x0E, UInt8(3 + returnParameters.count), credits, UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8)] + returnParameters
}

/// A Command Status event payload.
func commandStatusPayload(_ opcode: HCIOpcode, status: UInt8 = 0, credits: UInt8 = 1) -> [UInt8] {
    [0x0F, 4, status, credits, UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8)]
}
