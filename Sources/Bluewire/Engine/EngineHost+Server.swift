import BluewireGATT
import BluewireHostEngine

extension EngineHost {
    /// The database being served (`setDatabase`), with the values centrals wrote.
    public var database: GATTDatabase { engine.database }

    /// How the advertisement in force goes on the air (command set, PDUs, encoded data); nil when
    /// none was started or it was stopped.
    public var advertisingLayout: HostAdvertisingLayout? { engine.advertisingLayout }
}
