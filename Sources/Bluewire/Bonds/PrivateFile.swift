import Glibc

/// A small file holding secrets (a bond file), read and replaced with POSIX calls so that every
/// failure is said in the system's words ("Permission denied", "it is a directory"), never as a
/// Foundation error code.
public enum PrivateFile {
    /// Why a file could not be read or written, in words.
    public struct Failure: Error, CustomStringConvertible {
        public var reason: String
        public init(_ reason: String) { self.reason = reason }
        public var description: String { reason }
        static func system(_ code: Int32 = errno) -> Failure { Failure(String(cString: strerror(code))) }
    }

    /// The file's bytes; nil when nothing is at `path`. A directory is refused by name.
    public static func read(_ path: String) throws(Failure) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw .system()
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .system() }
        guard status.st_mode & S_IFMT != S_IFDIR else { throw Failure("it is a directory, not a file") }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .system()
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    /// The file `path` names once symbolic links are followed, link by link, so that replacing it
    /// replaces the link's target and leaves the link a link (a dotfiles repository's bond file stays
    /// in that repository). A dangling link gives the path it points to: the file is created there.
    public static func resolvingLinks(_ path: String) throws(Failure) -> String {
        var current = path
        for _ in 0..<40 {  // Linux's own limit on links followed (ELOOP)
            var status = stat()
            guard lstat(current, &status) == 0 else {
                if errno == ENOENT { return current }
                throw .system()
            }
            guard status.st_mode & S_IFMT == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let length = readlink(current, &buffer, buffer.count - 1)
            guard length >= 0 else { throw .system() }
            let target = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current = target.hasPrefix("/") ? target : directory(of: current) + "/" + target
        }
        throw .system(ELOOP)
    }

    /// Replaces the file at `path` (its target, when `path` is a symbolic link) with `bytes`, mode
    /// 0600: written to a new file beside it, flushed to the disk, then renamed over it, so that a
    /// reader (or a crash) sees the old file or the new one, never part of one. Missing directories
    /// are created with mode 0700.
    public static func replace(_ path: String, with bytes: [UInt8]) throws(Failure) {
        let target = try resolvingLinks(path)
        var status = stat()
        if stat(target, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            throw Failure("it is a directory, not a file")
        }
        let folder = directory(of: target)
        try makeDirectories(folder)
        let name = target.split(separator: "/").last.map(String.init) ?? target
        let temporary = folder + "/." + name + ".\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw Failure("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var failure: Failure?
        // The mode given to open is reduced by the umask: the key file is 0600 whatever it is.
        if fchmod(descriptor, 0o600) != 0 { failure = .system() }
        var offset = 0
        while failure == nil, offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno != EINTR { failure = .system() }
            } else {
                offset += written
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = .system() }
        if close(descriptor) != 0, failure == nil { failure = .system() }
        if failure == nil, rename(temporary, target) != 0 { failure = .system() }
        if let failure {
            unlink(temporary)
            throw failure
        }
        // The rename itself reaches the disk with the directory.
        let folderDescriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderDescriptor >= 0 {
            fsync(folderDescriptor)
            close(folderDescriptor)
        }
    }

    /// `mkdir -p` with mode 0700 for the directories it makes.
    static func makeDirectories(_ path: String) throws(Failure) {
        var status = stat()
        if stat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFDIR else { throw Failure("\(path) is not a directory") }
            return
        }
        let parent = directory(of: path)
        if parent != path { try makeDirectories(parent) }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
            throw Failure("cannot create directory \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// The directory part of a path ("." for a bare name, "/" for a file in the root).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let head = String(path[..<slash])
        return head.isEmpty ? "/" : head
    }
}
