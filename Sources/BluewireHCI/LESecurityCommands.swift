import BluewireCore

/// LE Enable Encryption (Core Vol 4 Part E §7.8.24): the central asks its controller to encrypt the
/// link with a Long Term Key. The controller answers with Command Status, then Encryption Change
/// (§7.7.8) on a link not yet encrypted or Encryption Key Refresh Complete (§7.7.39) on one that is.
/// During pairing EDIV and Rand are zero and the key is the STK or the LE SC LTK (Vol 3 Part H §2.4.4).
public struct LEEnableEncryption: HCICommandParameters {
    public static var opcode: HCIOpcode { .leEnableEncryption }
    public var connectionHandle: UInt16
    /// Random_Number (Rand), 64 bits.
    public var randomNumber: UInt64
    /// Encrypted_Diversifier (EDIV).
    public var encryptedDiversifier: UInt16
    /// Long_Term_Key, 16 octets least significant first (the order SMP PDUs carry keys in).
    public var longTermKey: [UInt8]

    public init(connectionHandle: UInt16, randomNumber: UInt64, encryptedDiversifier: UInt16, longTermKey: [UInt8]) {
        self.connectionHandle = connectionHandle
        self.randomNumber = randomNumber
        self.encryptedDiversifier = encryptedDiversifier
        self.longTermKey = longTermKey
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(connectionHandle)
        writer.append(randomNumber)
        writer.append(encryptedDiversifier)
        appendKey(longTermKey, into: &writer)
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readUInt16("Connection_Handle")
        randomNumber = try reader.readUInt64("Random_Number")
        encryptedDiversifier = try reader.readUInt16("Encrypted_Diversifier")
        longTermKey = Array(try reader.readBytes(16, "Long_Term_Key"))
    }
}

/// LE Long Term Key Request Reply (§7.8.25): the peripheral's host gives the key the controller asked
/// for in LE Long Term Key Request (§7.7.65.5). Answered with Command Complete (Status, handle).
public struct LELongTermKeyRequestReply: HCICommandParameters {
    public static var opcode: HCIOpcode { .leLongTermKeyRequestReply }
    public var connectionHandle: UInt16
    /// Long_Term_Key, 16 octets least significant first.
    public var longTermKey: [UInt8]

    public init(connectionHandle: UInt16, longTermKey: [UInt8]) {
        self.connectionHandle = connectionHandle
        self.longTermKey = longTermKey
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(connectionHandle)
        appendKey(longTermKey, into: &writer)
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        connectionHandle = try reader.readUInt16("Connection_Handle")
        longTermKey = Array(try reader.readBytes(16, "Long_Term_Key"))
    }
}

/// Exactly 16 octets: a shorter key is zero-padded, a longer one cut, so the packet stays well framed.
private func appendKey(_ key: [UInt8], into writer: inout ByteWriter) {
    for i in 0..<16 { writer.append(i < key.count ? key[i] : 0) }
}

extension LELongTermKeyRequest {
    /// An LE Long Term Key Request as a controller reports it (for tests and virtual controllers).
    public init(connectionHandle: UInt16, randomNumber: UInt64, encryptedDiversifier: UInt16) {
        self.connectionHandle = connectionHandle
        self.randomNumber = randomNumber
        self.encryptedDiversifier = encryptedDiversifier
    }
}
