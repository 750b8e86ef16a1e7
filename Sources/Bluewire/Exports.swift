// One import for applications: `import Bluewire` brings every type the host's API takes and
// returns (addresses and UUIDs, HCI commands and advertising data, ATT errors, GATT databases and
// characteristics, transports and capture files), as SwiftNIO's `NIO` module brings `NIOCore` and
// `NIOPosix`. The layers stay separate modules for code that needs only one of them (a capture
// decoder, a firmware built on `BluewireHostEngine`).
@_exported import BluewireATT
@_exported import BluewireCrypto
@_exported import BluewireCore
@_exported import BluewireGATT
@_exported import BluewireHostEngine
@_exported import BluewireHCI
@_exported import BluewireL2CAP
@_exported import BluewireSMP
@_exported import BluewireSnoop
@_exported import BluewireTransport
