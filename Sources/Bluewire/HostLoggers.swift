import Logging

/// One swift-log logger per layer the host logs for (Docs/Design.md: `debug` state changes, errors
/// the host recovers from). The sans-I/O engine does not log; the host logs here what it reports.
struct HostLoggers: Sendable {
    var transport: Logger
    var hci: Logger

    /// Each layer's logger is `base` (its handler, level and metadata: a program's own log handler
    /// receives everything) with the layer in the `layer` metadata.
    init(base: Logger) {
        func named(_ layer: String) -> Logger {
            var logger = base
            logger[metadataKey: "layer"] = .string(layer)
            return logger
        }
        transport = named("transport")
        hci = named("hci")
    }
}
