import Glibc

extension FileDescriptor {
    /// Resolves `host` with getaddrinfo(3) and connects a TCP stream socket to the first address that
    /// accepts. Blocking: call it from a dedicated thread.
    static func connectTCP(host: String, port: UInt16) throws(SystemCallError) -> FileDescriptor {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            // getaddrinfo reports through its own codes; EAI_SYSTEM means errno holds the reason.
            // Otherwise errno is meaningless ("No such file or directory" for an unknown host).
            let errno = status == EAI_SYSTEM ? Errno.current : Errno(rawValue: 0)
            let reason = gai_strerror(status).map { String(cString: $0) } ?? "\(status)"
            throw SystemCallError("getaddrinfo(\(host)): \(reason)", errno)
        }
        defer { freeaddrinfo(list) }
        var lastError = SystemCallError("connect", .connectionRefused)
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd: FileDescriptor
            do throws(SystemCallError) {
                fd = try socket(
                    domain: info.pointee.ai_family,
                    type: info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue),
                    protocol: info.pointee.ai_protocol)
            } catch {
                lastError = error
                continue
            }
            do throws(SystemCallError) {
                try fd.connect(info.pointee.ai_addr, info.pointee.ai_addrlen)
                return fd
            } catch {
                lastError = error
                try? fd.close()
            }
        }
        throw lastError
    }

    /// Connects a Unix stream socket to `path`. Blocking: call it from a dedicated thread.
    static func connectUnix(path: String) throws(SystemCallError) -> FileDescriptor {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let bytes = Array(path.utf8)
        guard bytes.count < capacity else { throw SystemCallError("connect(\(path))", Errno(rawValue: ENAMETOOLONG)) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let fd = try socket(domain: AF_UNIX, type: Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), protocol: 0)
        do throws(SystemCallError) {
            try withUnsafePointer(to: &address) { pointer throws(SystemCallError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (sa) throws(SystemCallError) in
                    try fd.connect(sa, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        } catch {
            try? fd.close()
            throw error
        }
        return fd
    }

    /// connect(2). An interrupted connect continues in the background (POSIX), so EINTR is followed
    /// by waiting for writability rather than by a second connect, which would fail with EALREADY.
    func connect(_ address: UnsafePointer<sockaddr>, _ length: socklen_t) throws(SystemCallError) {
        if Glibc.connect(rawValue, address, length) == 0 { return }
        let error = Errno.current
        guard error == .interrupted || error == .inProgress else { throw SystemCallError("connect", error) }
        _ = try FileDescriptor.poll([(self, .writable)], timeoutMilliseconds: -1)
        var pending: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        _ = try retryingOnInterrupt("getsockopt(SO_ERROR)") { getsockopt(rawValue, SOL_SOCKET, SO_ERROR, &pending, &size) }
        if pending != 0 { throw SystemCallError("connect", Errno(rawValue: pending)) }
    }
}
