import CBluetooth
import Glibc

extension FileDescriptor {
    /// eventfd(2): how other threads wake a transport's I/O thread out of poll(2) (to write queued
    /// packets or to close) without a polling loop.
    static func eventNotifier() throws(SystemCallError) -> FileDescriptor {
        FileDescriptor(rawValue: try retryingOnInterrupt("eventfd") { eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK)) })
    }

    /// Adds one to the eventfd counter, making it readable.
    func signalEvent() {
        var one: UInt64 = 1
        // A full counter (EAGAIN) still leaves the descriptor readable, which is all a wake-up needs.
        _ = try? retryingOnInterrupt("write(eventfd)") { Glibc.write(rawValue, &one, 8) }
    }

    /// Resets the eventfd counter so that poll(2) blocks again.
    func drainEvent() {
        var value: UInt64 = 0
        _ = try? retryingOnInterrupt("read(eventfd)") { Glibc.read(rawValue, &value, 8) }
    }
}

extension FileDescriptor {
    /// Blocks in poll(2) until the eventfd is signalled, then resets it (a thread with nothing else
    /// to wait for; no allocation).
    func waitForEvent() throws(SystemCallError) {
        var request = pollfd(fd: rawValue, events: Int16(POLLIN), revents: 0)
        _ = try retryingOnInterrupt("poll") { Glibc.poll(&request, 1, -1) }
        drainEvent()
    }
}
