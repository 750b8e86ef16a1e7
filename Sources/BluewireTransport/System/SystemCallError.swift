import Glibc

/// An `errno` value, with the names the transports test for.
///
/// Only the syscall wrappers in this folder read `errno`; everything above them receives a
/// `SystemCallError` value instead.
public struct Errno: RawRepresentable, Error, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32

    @inlinable
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let interrupted = Errno(rawValue: EINTR)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let inProgress = Errno(rawValue: EINPROGRESS)
    public static let addressFamilyNotSupported = Errno(rawValue: EAFNOSUPPORT)
    public static let protocolNotSupported = Errno(rawValue: EPROTONOSUPPORT)
    public static let noSuchDevice = Errno(rawValue: ENODEV)
    public static let deviceBusy = Errno(rawValue: EBUSY)
    public static let alreadyInProgress = Errno(rawValue: EALREADY)
    public static let permissionDenied = Errno(rawValue: EPERM)
    public static let accessDenied = Errno(rawValue: EACCES)
    public static let noSuchFile = Errno(rawValue: ENOENT)
    public static let connectionRefused = Errno(rawValue: ECONNREFUSED)
    public static let connectionReset = Errno(rawValue: ECONNRESET)
    public static let brokenPipe = Errno(rawValue: EPIPE)
    public static let ioError = Errno(rawValue: EIO)

    /// The current thread's `errno`.
    static var current: Errno { Errno(rawValue: errno) }

    public var description: String {
        guard let text = strerror(rawValue) else { return "errno \(rawValue)" }
        return String(cString: text) + " (errno \(rawValue))"
    }
}

/// A failed system call: which call, and the `errno` it left.
public struct SystemCallError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The call's name as in its man page (`socket`, `connect`, `ioctl(HCIDEVDOWN)`, ...).
    public var call: String
    public var errno: Errno

    public init(_ call: String, _ errno: Errno) {
        self.call = call
        self.errno = errno
    }

    /// Errno 0 marks a failure that reports through its own codes (getaddrinfo's EAI_*): `call`
    /// then says it all, and "Success" would only mislead.
    public var description: String { errno.rawValue == 0 ? call : "\(call): \(errno)" }
}

/// Runs `body` until it returns something other than -1 with `EINTR` (a signal interrupted the call
/// before it did anything: retrying is always correct), and turns -1 into a `SystemCallError`.
@inline(__always)
func retryingOnInterrupt<T: FixedWidthInteger>(
    _ call: @autoclosure () -> String, _ body: () -> T
) throws(SystemCallError) -> T {
    while true {
        let result = body()
        if result != -1 { return result }
        let error = Errno.current
        if error == .interrupted { continue }
        throw SystemCallError(call(), error)
    }
}
