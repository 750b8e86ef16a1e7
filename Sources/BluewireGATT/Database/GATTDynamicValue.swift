import BluewireATT
import BluewireCore

/// A value that changes while the server runs, unlike a cached one (fixed by the application and
/// read-only to centrals): either the application's, through handlers the server calls for every read
/// (`read`) and write (`write`) on the stack's executor, answering straight back; or kept by the server
/// (`stored`), which answers reads from it, replaces it on each accepted write and reports the whole
/// new value (`GATTServerEvent.valueWritten`). Anything a central may write is dynamic.
///
/// A handler refuses an operation by throwing `GATTAttributeError` with the ATT error code to send
/// (an application error 0x80–0x9F, Value Not Allowed, Invalid Offset, ...). With neither a handler nor
/// a stored value, the operation is not permitted (Read Not Permitted / Write Not Permitted).
public struct GATTDynamicValue: Sendable {
    public var read: GATTReadHandler?
    public var write: GATTWriteHandler?
    /// The value the server keeps, used for reads without a `read` handler and replaced by writes
    /// without a `write` handler; nil when the application's handlers own the value.
    public var stored: [UInt8]?

    @inlinable
    public init(read: GATTReadHandler? = nil, write: GATTWriteHandler? = nil) {
        self.read = read
        self.write = write
        self.stored = nil
    }

    /// A value the server keeps, starting as `bytes`: centrals read it and write it (as permissions
    /// allow), and the application sees each write as `valueWritten` (`PeripheralEvent.write`).
    @inlinable
    public static func stored(_ bytes: [UInt8]) -> GATTDynamicValue {
        var value = GATTDynamicValue()
        value.stored = bytes
        return value
    }
}

/// Produces the value from `request.offset` on (Read Blob asks for the part after the offset; Read,
/// Read By Type and Read Multiple ask with offset 0). The server truncates the result to what fits in
/// the response and to the 512-byte maximum attribute value length.
public typealias GATTReadHandler = @Sendable (GATTReadRequest) throws(GATTAttributeError) -> [UInt8]

/// Accepts `request.value` written at `request.offset`.
public typealias GATTWriteHandler = @Sendable (GATTWriteRequest) throws(GATTAttributeError) -> Void

/// An ATT error code returned by an application handler.
public struct GATTAttributeError: Error, Hashable, Sendable {
    public var code: ATTErrorCode

    @inlinable
    public init(_ code: ATTErrorCode) { self.code = code }
}

/// A read of a dynamic attribute.
public struct GATTReadRequest: Sendable {
    /// The attribute being read.
    public var handle: UInt16
    /// The first byte wanted: non-zero only for Read Blob.
    public var offset: Int
    /// The connection (HCI connection handle) of the client reading.
    public var connection: UInt16
    /// The link's security when the read arrived.
    public var securityLevel: GATTSecurityLevel

    @inlinable
    public init(handle: UInt16, offset: Int, connection: UInt16, securityLevel: GATTSecurityLevel) {
        self.handle = handle
        self.offset = offset
        self.connection = connection
        self.securityLevel = securityLevel
    }

    /// The part of `value` from `offset` on; Invalid Offset past its end (Core Vol 3 Part F §3.4.4.5).
    /// Handlers that hold the whole value answer a Read Blob with this.
    @inlinable
    public func part(of value: [UInt8]) throws(GATTAttributeError) -> [UInt8] {
        guard offset <= value.count else { throw GATTAttributeError(.invalidOffset) }
        return Array(value[offset...])
    }
}

/// How a write arrived, which decides whether the client hears about an error.
public enum GATTWriteKind: Hashable, Sendable {
    /// Write Request: the client gets a Write Response or the error.
    case request
    /// Write Command: no response; an error is dropped (Core Vol 3 Part F §3.4.5.3).
    case command
    /// Execute Write Request with flags 0x01 running queued Prepare Writes; contiguous parts for one
    /// attribute are joined, so a long write arrives as one call with the offset of its first part.
    case executeWrite
}

/// A write of a dynamic attribute.
public struct GATTWriteRequest: Sendable {
    /// The attribute being written.
    public var handle: UInt16
    /// The bytes written at `offset`.
    public var value: [UInt8]
    /// Where the bytes go; non-zero only for prepared (long or reliable) writes.
    public var offset: Int
    /// The connection (HCI connection handle) of the client writing.
    public var connection: UInt16
    /// The link's security when the write arrived.
    public var securityLevel: GATTSecurityLevel
    /// Which request or command carried the write.
    public var kind: GATTWriteKind

    @inlinable
    public init(
        handle: UInt16, value: [UInt8], offset: Int, connection: UInt16,
        securityLevel: GATTSecurityLevel, kind: GATTWriteKind
    ) {
        self.handle = handle
        self.value = value
        self.offset = offset
        self.connection = connection
        self.securityLevel = securityLevel
        self.kind = kind
    }
}
