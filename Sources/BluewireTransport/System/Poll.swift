import Glibc

/// poll(2) event bits.
struct PollEvents: OptionSet, Sendable {
    let rawValue: Int16
    static let readable = PollEvents(rawValue: Int16(POLLIN))
    static let writable = PollEvents(rawValue: Int16(POLLOUT))
    static let hangUp = PollEvents(rawValue: Int16(POLLHUP))
    static let error = PollEvents(rawValue: Int16(POLLERR))
}

extension FileDescriptor {
    /// poll(2): waits until one of the descriptors has one of its events (or the timeout, -1 for
    /// none, passes) and returns each descriptor's events. EINTR is retried with the same timeout.
    static func poll(_ requests: [(FileDescriptor, PollEvents)], timeoutMilliseconds: Int32) throws(SystemCallError) -> [PollEvents] {
        var entries = requests.map { pollfd(fd: $0.0.rawValue, events: $0.1.rawValue, revents: 0) }
        let result: Result<Int32, SystemCallError> = entries.withUnsafeMutableBufferPointer { buffer in
            do throws(SystemCallError) {
                return .success(try retryingOnInterrupt("poll") {
                    Glibc.poll(buffer.baseAddress, nfds_t(buffer.count), timeoutMilliseconds)
                })
            } catch {
                return .failure(error)
            }
        }
        _ = try result.get()
        return entries.map { PollEvents(rawValue: $0.revents) }
    }
}
