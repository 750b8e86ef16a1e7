import BluewireSnoop
import Glibc

/// Why a capture file could not be opened, read or written.
public enum CaptureFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `open` failed (no such file, permission denied, ...).
    case cannotOpen(path: String, errno: Int32)
    /// `read` failed (for example EISDIR for a directory).
    case readFailed(path: String, errno: Int32)
    /// `write` or `close` failed (disk full, ...).
    case writeFailed(path: String, errno: Int32)
    /// The file was read, but its contents are not a valid capture from some record on.
    case capture(path: String, CaptureError)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let code):
            return "cannot open \(path): \(CaptureFileError.message(code))"
        case .readFailed(let path, let code):
            return "cannot read \(path): \(CaptureFileError.message(code))"
        case .writeFailed(let path, let code):
            return "cannot write \(path): \(CaptureFileError.message(code))"
        case .capture(let path, let error):
            return "\(path): \(error)"
        }
    }

    static func message(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text)
    }
}
