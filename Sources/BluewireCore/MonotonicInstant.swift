/// A point on a monotonic clock, in microseconds from an arbitrary origin.
///
/// The sans-I/O layers never read a clock: the caller passes the current instant in, and they return
/// deadlines as instants. That is what lets a replay or a test run a 30 s ATT timeout in microseconds.
public struct MonotonicInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var microseconds: Int64

    @inlinable public init(microseconds: Int64) { self.microseconds = microseconds }

    public static let zero = MonotonicInstant(microseconds: 0)

    @inlinable
    public static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool {
        lhs.microseconds < rhs.microseconds
    }

    @inlinable
    public static func + (lhs: MonotonicInstant, rhs: TimeSpan) -> MonotonicInstant {
        MonotonicInstant(microseconds: lhs.microseconds &+ rhs.microseconds)
    }

    @inlinable
    public static func - (lhs: MonotonicInstant, rhs: MonotonicInstant) -> TimeSpan {
        TimeSpan(microseconds: lhs.microseconds &- rhs.microseconds)
    }

    public var description: String { "\(microseconds)µs" }
}

/// A length of time in microseconds.
public struct TimeSpan: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var microseconds: Int64

    @inlinable public init(microseconds: Int64) { self.microseconds = microseconds }

    @inlinable public static func microseconds(_ value: Int64) -> TimeSpan { TimeSpan(microseconds: value) }
    @inlinable public static func milliseconds(_ value: Int64) -> TimeSpan { TimeSpan(microseconds: value * 1_000) }
    @inlinable public static func seconds(_ value: Int64) -> TimeSpan { TimeSpan(microseconds: value * 1_000_000) }

    public static let zero = TimeSpan(microseconds: 0)

    @inlinable
    public static func < (lhs: TimeSpan, rhs: TimeSpan) -> Bool { lhs.microseconds < rhs.microseconds }

    @inlinable
    public static func + (lhs: TimeSpan, rhs: TimeSpan) -> TimeSpan {
        TimeSpan(microseconds: lhs.microseconds &+ rhs.microseconds)
    }

    @inlinable
    public static func * (lhs: TimeSpan, rhs: Int64) -> TimeSpan { TimeSpan(microseconds: lhs.microseconds &* rhs) }

    public var description: String {
        microseconds % 1_000_000 == 0 ? "\(microseconds / 1_000_000)s"
            : microseconds % 1_000 == 0 ? "\(microseconds / 1_000)ms" : "\(microseconds)µs"
    }
}
