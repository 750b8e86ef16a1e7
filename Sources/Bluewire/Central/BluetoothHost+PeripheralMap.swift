import BluewireCore
import BluewireHCI
import BluewireHostEngine

extension BluetoothHost {
    /// A `PeripheralMap` of this Host, already started: it scans for advertisers matching
    /// `options.filter`, connects to up to `options.limit` of them and discovers each one, reporting
    /// every step on the map's `events`.
    public nonisolated func mapPeripherals(_ options: PeripheralMap.Options) async -> PeripheralMap {
        let map = PeripheralMap(host: self, options: options)
        // A new map has not been started: the only error start() has cannot happen.
        try? await map.start()
        return map
    }
}

extension EngineHost {
    /// Scans, connects and discovers as `options` say (see `PeripheralMap`), started already.
    public nonisolated func mapPeripherals(_ options: PeripheralMap.Options) async -> PeripheralMap {
        let map = PeripheralMap(host: self, options: options)
        // A new map has not been started: the only error start() has cannot happen.
        try? await map.start()
        return map
    }
}
