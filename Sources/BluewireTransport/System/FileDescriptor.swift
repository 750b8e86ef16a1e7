import Glibc

/// An open file descriptor. It has no ownership semantics of its own: the transport that opened it
/// closes it exactly once (see `close()`).
struct FileDescriptor: Hashable, Sendable {
    let rawValue: Int32

    init(rawValue: Int32) { self.rawValue = rawValue }
}
