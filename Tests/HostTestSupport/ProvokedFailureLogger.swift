import Foundation
import Logging

extension Logger {
    /// The logger of a Host in a test that provokes a failure on purpose (a controller that never
    /// answers or answers garbage, a link or transport that drops, a replay that differs): the
    /// failure is the outcome the test asserts, so its error-level log line is noise in a passing
    /// run. Only critical messages are printed; `BLUEWIRE_TEST_LOG=trace` (or any level) shows more.
    public static var provokedFailure: Logger {
        var logger = Logger(label: "bluewire")
        logger.logLevel = ProcessInfo.processInfo.environment["BLUEWIRE_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
        return logger
    }
}
