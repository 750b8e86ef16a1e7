import Glibc

extension FileDescriptor {
    /// One write of `bytes[offset...]`: see `write(_:isSocket:)`.
    func write(_ bytes: [UInt8], from offset: Int = 0, isSocket: Bool) throws(SystemCallError) -> Int {
        let result: Result<Int, SystemCallError> = bytes.withUnsafeBytes { all in
            do throws(SystemCallError) {
                return .success(try write(UnsafeRawBufferPointer(rebasing: all[offset...]), isSocket: isSocket))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// One write of `bytes`: send(2) with MSG_NOSIGNAL on sockets (a peer that went away must be an
    /// EPIPE error, not a SIGPIPE that kills the process), write(2) otherwise. Returns the bytes
    /// written, which may be fewer than given, and 0 when a non-blocking descriptor is full.
    func write(_ bytes: UnsafeRawBufferPointer, isSocket: Bool) throws(SystemCallError) -> Int {
        do throws(SystemCallError) {
            if isSocket {
                return try retryingOnInterrupt("send") { Glibc.send(rawValue, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
            }
            return try retryingOnInterrupt("write") { Glibc.write(rawValue, bytes.baseAddress, bytes.count) }
        } catch where error.errno == .wouldBlock {
            return 0
        }
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

extension FileDescriptor {
    /// Octets up to which `write(header:body:from:isSocket:)` joins header and body in a buffer on
    /// the stack (`withUnsafeTemporaryAllocation` stays on the stack up to 1,024 octets): every LE
    /// ACL packet of a 251-octet buffer, every command.
    static let stackJoinLimit = 1_024

    /// One write of a one-octet `header` then `body`, from `offset` (counted over both), without an
    /// allocation (an H4 packet: its indicator, then the HCI packet). Up to `stackJoinLimit` octets
    /// the two are joined in a buffer on the stack and written with one send(2)/write(2), as
    /// `write(_:isSocket:)`; longer, they go as two buffers (sendmsg(2) with MSG_NOSIGNAL on sockets,
    /// writev(2) otherwise), which costs the kernel more than one buffer does. Either way a datagram
    /// socket (the HCI user channel) gets one datagram. Returns the bytes written, which may be
    /// fewer than given, and 0 when a non-blocking descriptor is full.
    func write(header: UInt8, body: ArraySlice<UInt8>, from offset: Int = 0, isSocket: Bool) throws(SystemCallError) -> Int {
        let remaining = 1 + body.count - offset
        guard remaining > 0 else { return 0 }
        guard remaining > Self.stackJoinLimit else {
            let result: Result<Int, SystemCallError> = withUnsafeTemporaryAllocation(byteCount: remaining, alignment: 1) { joined in
                var next = 0
                if offset == 0 {
                    joined[0] = header
                    next = 1
                }
                body[(body.startIndex + Swift.max(0, offset - 1))...].withUnsafeBytes { rest in
                    UnsafeMutableRawBufferPointer(rebasing: joined[next...]).copyMemory(from: rest)
                }
                do throws(SystemCallError) {
                    return .success(try write(UnsafeRawBufferPointer(joined), isSocket: isSocket))
                } catch {
                    return .failure(error)
                }
            }
            return try result.get()
        }
        return try writeGathered(header: header, body: body, from: offset, isSocket: isSocket)
    }

    /// `write(header:body:from:isSocket:)` as two buffers.
    func writeGathered(header: UInt8, body: ArraySlice<UInt8>, from offset: Int, isSocket: Bool) throws(SystemCallError) -> Int {
        var header = header
        let result: Result<Int, SystemCallError> = withUnsafeMutablePointer(to: &header) { headerByte in
            body.withUnsafeBytes { body in
                var vectors = (iovec(), iovec())
                return withUnsafeMutablePointer(to: &vectors) { pair in
                    pair.withMemoryRebound(to: iovec.self, capacity: 2) { vector in
                        var count = 0
                        if offset == 0 {
                            vector[0] = iovec(iov_base: UnsafeMutableRawPointer(headerByte), iov_len: 1)
                            count = 1
                        }
                        let rest = UnsafeRawBufferPointer(rebasing: body[Swift.max(0, offset - 1)...])
                        if !rest.isEmpty {
                            vector[count] = iovec(iov_base: UnsafeMutableRawPointer(mutating: rest.baseAddress), iov_len: rest.count)
                            count += 1
                        }
                        guard count > 0 else { return .success(0) }
                        do throws(SystemCallError) {
                            if isSocket {
                                var message = msghdr()
                                message.msg_iov = vector
                                message.msg_iovlen = count
                                return .success(try retryingOnInterrupt("sendmsg") {
                                    Glibc.sendmsg(rawValue, &message, Int32(MSG_NOSIGNAL))
                                })
                            }
                            return .success(try retryingOnInterrupt("writev") { Glibc.writev(rawValue, vector, Int32(count)) })
                        } catch where error.errno == .wouldBlock {
                            return .success(0)
                        } catch {
                            return .failure(error)
                        }
                    }
                }
            }
        }
        return try result.get()
    }
}
