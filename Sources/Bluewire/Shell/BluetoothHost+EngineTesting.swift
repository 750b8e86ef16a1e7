import BluewireHostEngine

extension BluetoothHost {
    /// The engine host under this host on the engine backend (nil on the legacy one), for tests that
    /// set up through it what the shell does not forward yet (a server database, advertising) while
    /// the areas move (Docs/Design.md, "BluetoothHost over the engine").
    @_spi(Testing) public nonisolated var engineHostForTesting: EngineHost? { engineHost }
}
