import BluewireATT
import BluewireCore

/// What a capture shows being done to one attribute handle of one GATT server on one connection.
///
/// Values are copies (a capture's chunks are not kept alive by an analysis). Reads count Read, Read
/// Blob at offset 0, Read By Type (Read Using Characteristic UUID) and Read Multiple results; a Read
/// Blob at a non-zero offset continues the value of the read before it (Core Vol 3 Part G §4.8.3), so
/// `lastReadValue` holds a long value assembled. Writes count Write Requests, Write Commands (signed or
/// not) and Prepare Write sequences that an Execute Write Request with flag 0x01 committed (§4.9.4).
public struct AttributeActivity: Sendable, Hashable {
    public var handle: UInt16

    /// Completed reads of the value.
    public var reads = 0
    /// The value the last read returned (a long value put together from its Read Blob parts).
    public var lastReadValue: [UInt8]?
    /// Value octets carried by read responses.
    public var readBytes = 0

    /// Write Requests (acknowledged writes).
    public var writeRequests = 0
    /// Write Commands and Signed Write Commands (no response).
    public var writeCommands = 0
    /// Prepared writes committed by an Execute Write Request.
    public var preparedWrites = 0
    /// The value last written (a prepared write's parts assembled).
    public var lastWrittenValue: [UInt8]?
    /// Value octets carried by writes.
    public var writtenBytes = 0

    /// Handle Value Notifications (single or in a Multiple Handle Value Notification).
    public var notifications = 0
    public var lastNotifiedValue: [UInt8]?
    public var notifiedBytes = 0

    /// Handle Value Indications.
    public var indications = 0
    public var lastIndicatedValue: [UInt8]?
    public var indicatedBytes = 0

    /// Error Responses naming this handle.
    public var errors = 0
    /// The last error the server answered for this handle.
    public var lastError: ATTErrorCode?

    @inlinable
    public init(handle: UInt16) {
        self.handle = handle
    }

    /// Every write, whatever its procedure.
    @inlinable public var writes: Int { writeRequests + writeCommands + preparedWrites }

    /// Whether anything at all was seen for this handle.
    @inlinable public var isEmpty: Bool { reads == 0 && writes == 0 && notifications == 0 && indications == 0 && errors == 0 }

    mutating func recordRead(_ value: ArraySlice<UInt8>) {
        reads += 1
        lastReadValue = Array(value)
        readBytes += value.count
    }

    /// A Read Blob part at `offset`: offset 0 starts a new read, a later offset continues the last one.
    mutating func recordReadBlob(_ value: ArraySlice<UInt8>, offset: Int) {
        guard offset > 0 else {
            recordRead(value)
            return
        }
        var assembled = lastReadValue ?? []
        if assembled.count > offset {
            assembled.removeSubrange(offset...)
        } else if assembled.count < offset {
            // A part whose predecessors are missing from the capture: keep its place, zero-filled.
            assembled.append(contentsOf: repeatElement(0, count: offset - assembled.count))
        }
        assembled.append(contentsOf: value)
        lastReadValue = assembled
        readBytes += value.count
        if reads == 0 { reads = 1 }
    }

    mutating func recordWrite(_ value: ArraySlice<UInt8>, acknowledged: Bool) {
        if acknowledged { writeRequests += 1 } else { writeCommands += 1 }
        lastWrittenValue = Array(value)
        writtenBytes += value.count
    }

    mutating func recordPreparedWrite(_ value: [UInt8]) {
        preparedWrites += 1
        lastWrittenValue = value
        writtenBytes += value.count
    }

    mutating func recordNotification(_ value: ArraySlice<UInt8>) {
        notifications += 1
        lastNotifiedValue = Array(value)
        notifiedBytes += value.count
    }

    mutating func recordIndication(_ value: ArraySlice<UInt8>) {
        indications += 1
        lastIndicatedValue = Array(value)
        indicatedBytes += value.count
    }

    mutating func recordError(_ code: ATTErrorCode) {
        errors += 1
        lastError = code
    }
}
