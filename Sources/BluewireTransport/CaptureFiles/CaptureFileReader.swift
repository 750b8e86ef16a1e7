import BluewireSnoop
import Glibc

/// Reads a btsnoop or pcapng file record by record, in fixed-size chunks.
///
/// Memory stays constant whatever the file size: one chunk plus at most one record that straddles two
/// chunks. Records are slices of the current chunk; keeping one alive past the next `next()` call is
/// allowed and only costs a copy of that chunk.
///
/// ```swift
/// let file = try CaptureFileReader(path: path)
/// while let record = try file.next() { ... }
/// ```
public final class CaptureFileReader {
    public let path: String
    public let chunkSize: Int
    private var descriptor: Int32
    private var reader = CaptureReader()
    private var chunk: [UInt8]
    private var reachedEndOfFile = false
    private var finished = false

    /// Opens `path` for reading; throws `.cannotOpen` with the errno if it cannot be opened.
    public init(path: String, chunkSize: Int = 256 * 1024) throws(CaptureFileError) {
        self.path = path
        self.chunkSize = max(chunkSize, 16)
        self.chunk = []
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .cannotOpen(path: path, errno: errno) }
        descriptor = fd
    }

    deinit {
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
    }

    /// The capture's container, known once the first record (or the end of an empty capture) has been read.
    public var format: CaptureFormat? { reader.format }

    /// Records delivered so far.
    public var recordCount: Int { reader.recordCount }

    /// The next record, or nil at the end of the capture.
    ///
    /// A file that ends inside a record throws `.capture` with the record index and offset, after
    /// every complete record before it has been returned.
    public func next() throws(CaptureFileError) -> CaptureRecord? {
        guard !finished else { return nil }
        while true {
            do {
                if let record = try reader.next() { return record }
            } catch {
                finish()
                throw .capture(path: path, error)
            }
            if reader.isFinished || reachedEndOfFile {
                finish()
                return nil
            }
            try readChunk()
        }
    }

    /// Closes the file early; `next()` then returns nil.
    public func close() {
        finish()
    }

    private func finish() {
        finished = true
        if descriptor >= 0 {
            _ = Glibc.close(descriptor)
            descriptor = -1
        }
    }

    private func readChunk() throws(CaptureFileError) {
        // Reuse the chunk's storage unless a record still holds it (then the array reallocates).
        if chunk.count != chunkSize {
            chunk = [UInt8](repeating: 0, count: chunkSize)
        }
        var count = 0
        while true {
            count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            break
        }
        guard count >= 0 else {
            let code = errno
            finish()
            throw .readFailed(path: path, errno: code)
        }
        if count == 0 {
            reachedEndOfFile = true
            reader.finishInput()
        } else {
            reader.feed(chunk[0..<count])
        }
    }
}
