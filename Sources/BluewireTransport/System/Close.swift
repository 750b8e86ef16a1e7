import Glibc

extension FileDescriptor {
    /// close(2). Not retried on EINTR: on Linux the descriptor is released even then, and retrying
    /// could close a descriptor another thread has just been given.
    func close() throws(SystemCallError) {
        if Glibc.close(rawValue) == -1 {
            let error = Errno.current
            if error == .interrupted { return }
            throw SystemCallError("close", error)
        }
    }
}
