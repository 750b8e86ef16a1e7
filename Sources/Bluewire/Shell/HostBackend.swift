import Glibc

/// Which implementation a `BluetoothHost` runs on while it moves onto the sans-I/O `HostEngine`
/// (Docs/Design.md, "BluetoothHost over the engine").
///
/// `.engine`, the default, runs the host on an `EngineHost` that shares the BluetoothHost's
/// executor, so the host's synchronous API stays synchronous; every public area runs there.
/// `.legacy` is BluetoothHost's older protocol code, kept for one more step so the test suites can
/// still compare the two (`BLUEWIRE_HOST_BACKEND=legacy`, Docs/Testing.md); it goes, with this
/// switch, when that code is deleted.
@_spi(Testing) public enum HostBackend: Sendable, Hashable {
    case legacy, engine

    /// `BLUEWIRE_HOST_BACKEND=legacy` in the environment selects `.legacy` for every host the
    /// process creates without naming a backend; anything else is `.engine`.
    public static var processDefault: HostBackend {
        guard let value = getenv("BLUEWIRE_HOST_BACKEND") else { return .engine }
        return String(cString: value) == "legacy" ? .legacy : .engine
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
