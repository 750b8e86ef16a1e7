import BluewireTesting

/// The engine's tests drive it with BluewireTesting's `EmbeddedHostEngine`.
typealias EngineDriver = EmbeddedHostEngine
