import BluewireGATT
import BluewireHostEngine

extension EngineHost {
    /// Serves `database` from now on (to links already up too): the engine's GATT server answers
    /// every central's requests from it, checking each attribute's permissions against the link's
    /// security (Core Vol 3 Part F §4, Part C §10.3).
    public func setDatabase(_ database: GATTDatabase) {
        engine.setDatabase(database)
    }

    /// The database being served, with the values centrals wrote.
    public var database: GATTDatabase { engine.database }

    /// How the advertisement in force goes on the air (command set, PDUs, encoded data); nil when
    /// none was started or it was stopped.
    public var advertisingLayout: HostAdvertisingLayout? { engine.advertisingLayout }
}
