import BluewireCore

/// Command Complete (Core Vol 4 Part E §7.7.14): the controller finished a command.
///
/// Num_HCI_Command_Packets is how many more commands the host may send now (0 pauses the host).
/// The return parameters are kept as a slice; decode them with `returnParameters(_:)` and the
/// typed `CommandReturnParameters` of the command (a vendor opcode or 0x0000 has none).
public struct CommandComplete: Hashable, Sendable {
    public var numHCICommandPackets: UInt8
    public var commandOpcode: HCIOpcode
    public var returnParameters: ArraySlice<UInt8>

    public init(numHCICommandPackets: UInt8, commandOpcode: HCIOpcode, returnParameters: ArraySlice<UInt8>) {
        self.numHCICommandPackets = numHCICommandPackets
        self.commandOpcode = commandOpcode
        self.returnParameters = returnParameters
    }

    /// The first return parameter, which is Status for every command the stack sends;
    /// nil when the controller returned nothing (opcode 0x0000 only frees credits).
    @inlinable
    public var status: HCIStatus? { returnParameters.first.map(HCIStatus.init(rawValue:)) }

    /// Decodes the return parameters as `R`. A non-success status with no further bytes
    /// (bumble's LE Set Data Length answer) is a truncation error on the first missing field.
    @inlinable
    public func returnParameters<R: CommandReturnParameters>(_ type: R.Type) throws(DecodeError) -> R {
        var reader = ByteReader(returnParameters, layer: "hci")
        do {
            return try R(decoding: &reader)
        } catch {
            throw error.relocated(by: 5, layer: "hci")  // after event code, length, credits, opcode
        }
    }
}

/// Command Status (§7.7.15): the controller accepted (status 0) or refused a command that completes
/// later with its own event (LE Create Connection, Disconnect, LE Set PHY…).
public struct CommandStatus: Hashable, Sendable {
    public var status: HCIStatus
    public var numHCICommandPackets: UInt8
    public var commandOpcode: HCIOpcode

    public init(status: HCIStatus, numHCICommandPackets: UInt8, commandOpcode: HCIOpcode) {
        self.status = status
        self.numHCICommandPackets = numHCICommandPackets
        self.commandOpcode = commandOpcode
    }
}

/// Disconnection Complete (§7.7.5): the connection is gone; Reason says why (for example
/// 0x13 Remote User Terminated Connection, 0x08 Connection Timeout).
public struct DisconnectionComplete: Hashable, Sendable {
    public var status: HCIStatus
    public var connectionHandle: UInt16
    public var reason: HCIStatus

    public init(status: HCIStatus, connectionHandle: UInt16, reason: HCIStatus) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.reason = reason
    }
}

/// Encryption Change (§7.7.8 v1, code 0x08; §7.7.8 v2, code 0x59, which adds the key size).
public struct EncryptionChange: Hashable, Sendable {
    public var status: HCIStatus
    public var connectionHandle: UInt16
    /// 0x00 off, 0x01 on (AES-CCM on LE), 0x02 on with AES-CCM on BR/EDR.
    public var encryptionEnabled: UInt8
    /// Encryption_Key_Size in octets, present only in the v2 event.
    public var encryptionKeySize: UInt8?

    public init(status: HCIStatus, connectionHandle: UInt16, encryptionEnabled: UInt8, encryptionKeySize: UInt8? = nil) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.encryptionEnabled = encryptionEnabled
        self.encryptionKeySize = encryptionKeySize
    }
}

/// Encryption Key Refresh Complete (§7.7.39): the link was re-encrypted with a (possibly new) key.
public struct EncryptionKeyRefreshComplete: Hashable, Sendable {
    public var status: HCIStatus
    public var connectionHandle: UInt16

    public init(status: HCIStatus, connectionHandle: UInt16) {
        self.status = status
        self.connectionHandle = connectionHandle
    }
}

/// Read Remote Version Information Complete (§7.7.12): the peer's LL version and company.
public struct ReadRemoteVersionInformationComplete: Hashable, Sendable {
    public var status: HCIStatus
    public var connectionHandle: UInt16
    public var version: UInt8
    public var manufacturerName: UInt16
    public var subversion: UInt16

    public init(status: HCIStatus, connectionHandle: UInt16, version: UInt8, manufacturerName: UInt16, subversion: UInt16) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.version = version
        self.manufacturerName = manufacturerName
        self.subversion = subversion
    }
}

/// Number Of Completed Packets (§7.7.19): per connection handle, how many ACL packets the controller
/// has sent or flushed, returning that many buffer credits to the host.
///
/// Iterating yields `(connectionHandle, numCompletedPackets)` pairs straight from the event bytes,
/// without allocating. Pairs are interleaved per handle, as controllers send them.
public struct NumberOfCompletedPackets: Hashable, Sendable, Sequence {
    public var numHandles: UInt8
    /// The 4 × Num_Handles octets of handle/count pairs.
    public var entries: ArraySlice<UInt8>

    @inlinable
    public init(numHandles: UInt8, entries: ArraySlice<UInt8>) {
        self.numHandles = numHandles
        self.entries = entries
    }

    /// One handle and the number of its packets completed since the last event.
    public struct Entry: Hashable, Sendable {
        public var connectionHandle: UInt16
        public var numCompletedPackets: UInt16
        @inlinable public init(connectionHandle: UInt16, numCompletedPackets: UInt16) {
            self.connectionHandle = connectionHandle
            self.numCompletedPackets = numCompletedPackets
        }
    }

    /// Reads handle/count pairs straight from the event bytes.
    public struct Iterator: IteratorProtocol {
        @usableFromInline var bytes: ArraySlice<UInt8>
        @usableFromInline var index: Int

        @inlinable init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            self.index = bytes.startIndex
        }

        @inlinable
        public mutating func next() -> Entry? {
            guard bytes.endIndex - index >= 4 else { return nil }
            let handle = UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8
            let count = UInt16(bytes[index + 2]) | UInt16(bytes[index + 3]) << 8
            index += 4
            return Entry(connectionHandle: handle & 0x0FFF, numCompletedPackets: count)
        }
    }

    @inlinable public func makeIterator() -> Iterator { Iterator(bytes: entries) }
    @inlinable public var underestimatedCount: Int { Int(numHandles) }
}
