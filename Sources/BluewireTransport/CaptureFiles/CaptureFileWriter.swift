import BluewireCore
import BluewireSnoop
import Glibc

/// Writes HCI packets to a btsnoop file (datalink 1002), as `--capture FILE` does.
///
/// Records are buffered and written in blocks of `flushThreshold` bytes; `flush()` writes what is
/// buffered and `close()` flushes and closes. A writer dropped without `close()` flushes in `deinit`,
/// ignoring errors, so that a capture of a crashing session keeps as much as possible.
public final class CaptureFileWriter {
    public let path: String
    public let flushThreshold: Int
    private var descriptor: Int32
    private var pending: [UInt8] = []
    private let encoder = BTSnoopWriter()

    /// Creates (or truncates) `path` and writes the btsnoop file header.
    public init(path: String, flushThreshold: Int = 64 * 1024) throws(CaptureFileError) {
        self.path = path
        self.flushThreshold = flushThreshold
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .cannotOpen(path: path, errno: errno) }
        descriptor = fd
        pending.reserveCapacity(flushThreshold + 512)
        encoder.appendFileHeader(to: &pending)
        try flush()
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
        encoder.appendRecord(packet, direction: direction, timestamp: timestamp, originalLength: originalLength,
                             drops: drops, to: &pending)
        if pending.count >= flushThreshold { try flush() }
    }

    /// Writes every buffered record to the file.
    public func flush() throws(CaptureFileError) {
        guard descriptor >= 0 else {
            if pending.isEmpty { return }
            throw .writeFailed(path: path, errno: EBADF)
        }
        var written = 0
        while written < pending.count {
            let result = pending.withUnsafeBytes { bytes -> Int in
                guard let base = bytes.baseAddress else { return 0 }
                return Glibc.write(descriptor, base + written, bytes.count - written)
            }
            if result < 0 {
                if errno == EINTR { continue }
                let code = errno
                pending.removeFirst(written)
                throw .writeFailed(path: path, errno: code)
            }
            written += result
        }
        pending.removeAll(keepingCapacity: true)
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
}
