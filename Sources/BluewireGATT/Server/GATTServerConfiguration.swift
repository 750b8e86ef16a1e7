/// Limits a `GATTServer` keeps, so that no client can make it grow without bound.
public struct GATTServerConfiguration: Hashable, Sendable {
    /// The server's receive MTU sent in the Exchange MTU Response (Core Vol 3 Part F §3.4.2.2).
    /// 517 lets a client read or write a whole 512-byte value in one PDU. Clamped to 23...65535.
    public var serverMTU: Int
    /// Prepare Write Requests queued per connection before Prepare Queue Full (§3.4.6.1).
    public var maximumPreparedWrites: Int
    /// Bytes of Part Attribute Value queued per connection before Prepare Queue Full.
    public var maximumPreparedWriteBytes: Int
    /// Indications waiting per connection behind the one awaiting confirmation (§3.4.7.2 allows one
    /// outstanding); more are dropped and reported as `GATTServerEvent.indicationDropped`.
    public var maximumQueuedIndications: Int
    /// Events kept until `takeEvents()`; later ones are counted in `droppedEventCount` and dropped.
    public var maximumPendingEvents: Int

    public init(
        serverMTU: Int = 517,
        maximumPreparedWrites: Int = 64,
        maximumPreparedWriteBytes: Int = 4096,
        maximumQueuedIndications: Int = 16,
        maximumPendingEvents: Int = 256
    ) {
        self.serverMTU = min(max(serverMTU, GATTServer.defaultMTU), 0xFFFF)
        self.maximumPreparedWrites = max(0, maximumPreparedWrites)
        self.maximumPreparedWriteBytes = max(0, maximumPreparedWriteBytes)
        self.maximumQueuedIndications = max(0, maximumQueuedIndications)
        self.maximumPendingEvents = max(0, maximumPendingEvents)
    }
}
