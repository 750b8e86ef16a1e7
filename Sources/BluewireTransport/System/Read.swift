import Glibc

extension FileDescriptor {
    /// read(2) into `buffer`: the byte count (0 at end of stream), or nil when a non-blocking
    /// descriptor has nothing to read yet.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int? {
        do throws(SystemCallError) {
            return try retryingOnInterrupt("read") { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
        } catch where error.errno == .wouldBlock {
            return nil
        }
    }
}
