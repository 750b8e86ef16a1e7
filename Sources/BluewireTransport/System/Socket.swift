import Glibc

extension FileDescriptor {
    /// socket(2). `type` should include SOCK_CLOEXEC so that children (test peers, shells) do not
    /// inherit the descriptor and keep a controller busy.
    static func socket(domain: Int32, type: Int32, protocol proto: Int32) throws(SystemCallError) -> FileDescriptor {
        let fd = try retryingOnInterrupt("socket") { Glibc.socket(domain, type, proto) }
        return FileDescriptor(rawValue: fd)
    }

    /// fcntl(2) F_SETFL O_NONBLOCK: the transports' I/O thread waits in poll(2), never in read or write.
    func setNonBlocking() throws(SystemCallError) {
        let flags = try retryingOnInterrupt("fcntl(F_GETFL)") { fcntl(rawValue, F_GETFL) }
        _ = try retryingOnInterrupt("fcntl(F_SETFL)") { fcntl(rawValue, F_SETFL, flags | O_NONBLOCK) }
    }

    /// setsockopt(2) TCP_NODELAY: HCI commands are small and latency matters more than batching.
    func setNoDelay() throws(SystemCallError) {
        var one: Int32 = 1
        _ = try retryingOnInterrupt("setsockopt(TCP_NODELAY)") {
            setsockopt(rawValue, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
    }
}
