// Replay (`ReplayTransport`, `ReplayClock`, `ReplayScript`) and the virtual clock live in `BluewireReplay`,
// which the `bluewire` command links; this module, the virtual controller and link that tests use, is
// linked only by tests and examples. Tests that import `BluewireTesting` see both.
@_exported import BluewireReplay

/// The name tests use for `VirtualClock`: deterministic virtual time that moves only when a test advances it.
public typealias TestClock = VirtualClock
