import BluewireCore

/// What the server remembers about one connection. Every collection here is bounded: the CCCD map by
/// the number of CCCDs in the database, the queues by `GATTServerConfiguration`.
struct GATTServerConnection: Sendable {
    /// ATT_MTU in force (23 until an Exchange MTU, Core Vol 3 Part F §3.2.8).
    var mtu = GATTServer.defaultMTU
    var mtuExchanged = false
    var securityLevel: GATTSecurityLevel
    /// Client Characteristic Configuration values by descriptor handle: per client, as Part G §3.3.3.3
    /// requires.
    var clientConfigurations: LinearMap<UInt16, UInt16> = LinearMap()
    /// What this client wrote to Client Supported Features (Part G §7.2: per client; bits once set stay set).
    var clientSupportedFeatures: [UInt8] = []
    /// The prepare queue (Part F §3.4.6).
    var preparedWrites: [PreparedWrite] = []
    var preparedBytes = 0
    /// The handle of the indication awaiting its confirmation.
    var indicationInFlight: UInt16? = nil
    var pendingIndications: [PendingIndication] = []

    init(securityLevel: GATTSecurityLevel) {
        self.securityLevel = securityLevel
    }
}

struct PreparedWrite: Sendable {
    var handle: UInt16
    var offset: Int
    var value: [UInt8]
}

struct PendingIndication: Sendable {
    var handle: UInt16
    var value: [UInt8]
}
