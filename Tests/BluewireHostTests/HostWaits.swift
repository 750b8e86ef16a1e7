@_spi(Testing) import Bluewire
import BluewireHostEngine
import Testing

/// The waits of the host tests: each awaits the signal of the thing it waits for, checked by the
/// host itself whenever its state changes (`BluetoothHost.waitForDiagnostics`,
/// `EngineHost.waitForEngineState`), never a poll or a sleep. A host that closes before the
/// condition holds fails the test, naming what never happened.
extension BluetoothHost {
    func until(
        _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: @escaping @Sendable (HostDiagnostics) -> Bool
    ) async throws {
        guard await waitForDiagnostics(condition) else {
            Issue.record("never happened, the host closed first: \(what)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
    }
}

extension EngineHost {
    func until(
        _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: @escaping @Sendable (HostEngine) -> Bool
    ) async throws {
        guard await waitForEngineState(condition) else {
            Issue.record("never happened, the host closed first: \(what)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
    }
}
