import BluewireGATT
import BluewireHostEngine

extension EngineHost {
    /// Serves `database` from now on, to links already up too (`HostEngine.setDatabase`).
    public func setDatabase(_ database: GATTDatabase) {
        engine.setDatabase(database)
        drain()
    }
}
