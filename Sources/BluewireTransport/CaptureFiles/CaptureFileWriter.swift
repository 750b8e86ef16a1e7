import BluewireCore
import BluewireSnoop
import Dispatch
import Glibc
import Synchronization

/// Writes HCI packets to a btsnoop file (datalink 1002), as `--capture FILE` does.
///
/// Records are encoded into a buffer; each time it holds `flushThreshold` bytes it is handed, whole,
/// to a serial queue of the writer's own that does the `write(2)` calls, so the caller (the host's
/// executor, recording every packet it receives and sends) never blocks on the file system. Blocks
/// reach the file in the order they were filled. A failed background write is reported by the next
/// `write`, `flush` or `close`. `flush()` and `close()` wait until everything buffered is in the
/// file. A writer dropped without `close()` flushes in `deinit`, ignoring errors, so that a capture
/// of a crashing session keeps as much as possible.
///
/// A `CaptureTap` that owns a writer calls it from a thread of its own, and switches the background
/// queue off (`writeOnCallingThread()`): its thread does the `write(2)` calls itself, reusing one buffer,
/// so that a stuck file system holds the tap's bounded queue instead of an unbounded list of blocks.
public final class CaptureFileWriter {
    public let path: String
    public let flushThreshold: Int
    private var descriptor: Int32
    private var pending: [UInt8] = []
    private let encoder = BTSnoopWriter()
    /// Does the blocking writes, in order (a serial queue: Dispatch gives it a thread of its own,
    /// outside Swift concurrency's cooperative pool).
    private let io = DispatchQueue(label: "bluewire.capture-writer")
    /// The first error a background write met (errno), reported once.
    private let backgroundError = BackgroundWriteError()
    /// Whether full blocks go to `io` (true) or are written by the caller (a thread that may block).
    private var writesInBackground = true

    /// Creates (or truncates) `path` and writes the btsnoop file header.
    /// - Throws: `.cannotOpen` when the file cannot be created.
    public init(path: String, flushThreshold: Int = 64 * 1024) throws(CaptureFileError) {
        self.path = path
        self.flushThreshold = flushThreshold
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .cannotOpen(path: path, errno: errno) }
        descriptor = fd
        pending.reserveCapacity(flushThreshold + 512)
        encoder.appendFileHeader(to: &pending)
        // The header goes like every block: a file that cannot take it (a full disk) is reported by
        // the next call; one that cannot be opened was reported above.
        writeInBackground()
    }

    deinit {
        if descriptor >= 0 {
            try? flush()
            _ = Glibc.close(descriptor)
        }
    }

    /// Appends one packet; `timestamp` is in btsnoop microseconds (`BTSnoopWriter.timestamp(unixMicroseconds:)`).
    public func write(
        _ packet: HCIPacket, direction: PacketDirection, timestamp: Int64,
        originalLength: UInt32? = nil, drops: UInt32 = 0
    ) throws(CaptureFileError) {
        guard descriptor >= 0 else { throw .writeFailed(path: path, errno: EBADF) }
        try reportBackgroundError()
        encoder.appendRecord(packet, direction: direction, timestamp: timestamp, originalLength: originalLength,
                             drops: drops, to: &pending)
        if pending.count >= flushThreshold { writeInBackground() }
    }

    /// Writes every buffered record to the file, and waits until it is there.
    public func flush() throws(CaptureFileError) {
        guard descriptor >= 0 else {
            if pending.isEmpty { return }
            throw .writeFailed(path: path, errno: EBADF)
        }
        writeInBackground()
        io.sync {}
        try reportBackgroundError()
    }

    /// Flushes and closes the file. Further writes fail.
    public func close() throws(CaptureFileError) {
        guard descriptor >= 0 else { return }
        defer {
            _ = Glibc.close(descriptor)
            descriptor = -1
        }
        try flush()
    }

    /// From now on, `write`, `flush` and `close` do the `write(2)` calls on the calling thread (which
    /// must be one that may block); waits for the blocks already handed to the background queue.
    func writeOnCallingThread() {
        io.sync {}
        writesInBackground = false
    }

    /// Hands the buffered block to the I/O queue and starts a new one (or, when the caller does the
    /// writing, writes it and reuses the buffer).
    private func writeInBackground() {
        guard !pending.isEmpty else { return }
        if !writesInBackground {
            guard backgroundError.code.withLock({ $0 == nil }) else { pending.removeAll(keepingCapacity: true); return }
            if let code = Self.writeAll(pending, to: descriptor) { backgroundError.code.withLock { $0 = code } }
            pending.removeAll(keepingCapacity: true)
            return
        }
        var block: [UInt8] = []
        block.reserveCapacity(flushThreshold + 512)
        swap(&block, &pending)
        let fd = descriptor, failure = backgroundError, filled = block
        io.async {
            guard failure.code.withLock({ $0 == nil }) else { return }
            if let code = Self.writeAll(filled, to: fd) { failure.code.withLock { $0 = code } }
        }
    }

    private func reportBackgroundError() throws(CaptureFileError) {
        if let code = backgroundError.code.withLock({ $0 }) { throw .writeFailed(path: path, errno: code) }
    }

    /// `write(2)` until every byte is written; the errno of a failure.
    private static func writeAll(_ bytes: [UInt8], to fd: Int32) -> Int32? {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.write(fd, base + written, buffer.count - written)
            }
            if result < 0 {
                if errno == EINTR { continue }
                return errno
            }
            written += result
        }
        return nil
    }
}

/// The errno of the first failed background write, shared with the I/O queue.
private final class BackgroundWriteError: Sendable {
    let code = Mutex<Int32?>(nil)
}
