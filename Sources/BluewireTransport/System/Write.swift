import Glibc

extension FileDescriptor {
    /// One write of `bytes[offset...]`: send(2) with MSG_NOSIGNAL on sockets (a peer that went away
    /// must be an EPIPE error, not a SIGPIPE that kills the process), write(2) otherwise. Returns the
    /// bytes written, which may be fewer than given, and 0 when a non-blocking descriptor is full.
    func write(_ bytes: [UInt8], from offset: Int = 0, isSocket: Bool) throws(SystemCallError) -> Int {
        let result: Result<Int, SystemCallError> = bytes.withUnsafeBytes { all in
            let rest = UnsafeRawBufferPointer(rebasing: all[offset...])
            do throws(SystemCallError) {
                if isSocket {
                    return .success(try retryingOnInterrupt("send") {
                        Glibc.send(rawValue, rest.baseAddress, rest.count, Int32(MSG_NOSIGNAL))
                    })
                }
                return .success(try retryingOnInterrupt("write") { Glibc.write(rawValue, rest.baseAddress, rest.count) })
            } catch where error.errno == .wouldBlock {
                return .success(0)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Writes all of `bytes`, waiting in poll(2) while the descriptor is full. Blocking: for
    /// dedicated threads and tests only.
    func writeAll(_ bytes: [UInt8], isSocket: Bool) throws(SystemCallError) {
        var offset = 0
        while offset < bytes.count {
            let written = try write(bytes, from: offset, isSocket: isSocket)
            offset += written
            if written == 0 { _ = try FileDescriptor.poll([(self, .writable)], timeoutMilliseconds: -1) }
        }
    }
}
