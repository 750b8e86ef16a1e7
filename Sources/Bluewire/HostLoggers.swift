import Logging

/// One swift-log logger per layer (Docs/Design.md: `trace` shows every packet, `debug` state changes).
/// The sans-I/O layers do not log; they return diagnostics that the Host logs here.
struct HostLoggers: Sendable {
    var transport: Logger
    var hci: Logger
    var l2cap: Logger
    var att: Logger
    var gatt: Logger

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
        l2cap = named("l2cap")
        att = named("att")
        gatt = named("gatt")
    }
}
