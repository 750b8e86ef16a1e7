import Glibc

/// Which implementation a `BluetoothHost` runs on while it moves onto the sans-I/O `HostEngine`
/// (Docs/Design.md, "BluetoothHost over the engine").
///
/// `.legacy` is BluetoothHost's own protocol code, the default. `.engine` runs the host on an
/// `EngineHost` that shares the BluetoothHost's executor, so the host's synchronous API stays
/// synchronous: it covers the areas moved so far (bring-up, raw commands, events) and the rest
/// still answers from the legacy code. The switch is for the test suites, which run the moved
/// areas both ways (`BLUEWIRE_HOST_BACKEND=engine`, Docs/Testing.md); it goes away when the move
/// is finished.
@_spi(Testing) public enum HostBackend: Sendable, Hashable {
    case legacy, engine

    /// `BLUEWIRE_HOST_BACKEND=engine` in the environment selects `.engine` for every host the
    /// process creates without naming a backend; anything else is `.legacy`.
    public static var processDefault: HostBackend {
        guard let value = getenv("BLUEWIRE_HOST_BACKEND") else { return .legacy }
        return String(cString: value) == "engine" ? .engine : .legacy
    }
}

/// The executor a legacy `BluetoothHost` runs on: an actor with no state of its own, so that a
/// BluetoothHost always names its executor (`BluetoothHost.unownedExecutor`), the engine's
/// when it runs on one.
actor HostExecutorAnchor {}

extension BluetoothHost {
    /// The backend this host runs on (HostBackend).
    @_spi(Testing) public nonisolated var backend: HostBackend { engineHost == nil ? .legacy : .engine }
}
