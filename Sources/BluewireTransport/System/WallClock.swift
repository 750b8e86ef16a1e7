import Glibc

/// clock_gettime(2) CLOCK_REALTIME in microseconds since the Unix epoch: btsnoop records carry wall
/// time (the sans-I/O layers never read a clock; only this I/O module does).
func wallClockMicroseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000
}
