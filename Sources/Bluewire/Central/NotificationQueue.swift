import BluewireTransport

/// Notifications on their way from the Host's executor to one subscriber, in arrival order, without
/// bound (the subscriber may start reading late and must miss nothing): the generic
/// `SingleConsumerQueue`, which the inbound packets and scan results use too.
///
/// It does what an unbounded `AsyncStream` would, without its cost on this path
/// (`Benchmarks/NotificationPath` compares the two): the buffer keeps its capacity, and only a
/// subscriber that has to wait allocates its continuation. One consumer at a time.
typealias NotificationQueue = SingleConsumerQueue<GATTNotification, Never>
