import BluewireCore

/// A link to one HCI controller: the boundary between the Host and all I/O.
///
/// Every transport (HCI user channel, UART, TCP, Unix socket, replay, and decorators such as
/// `CaptureTap`) has this shape, so the Host neither knows nor cares which one it drives:
///
/// ```swift
/// let transport = try await TransportSpec(parsing: "tcp:127.0.0.1:9000").open()
/// try await transport.send(HCIPacket(type: .command, payload: [0x03, 0x0C, 0x00])) // HCI Reset
/// for try await packet in transport.inbound { ... }   // Command Complete, events, ACL, in order
/// await transport.close()
/// ```
///
/// Rules every conforming type keeps:
/// - `inbound` delivers controller-to-host packets in the order the controller sent them, to one
///   consumer. It finishes after `close()` or when the controller's stream ended cleanly, and throws
///   the `TransportError` that ended it otherwise.
/// - `send` returns once the packet has been handed to the kernel (or the replay script); concurrent
///   sends go out whole and in the order their calls started, never interleaved. It never blocks a
///   thread of the cooperative pool.
/// - `close()` is idempotent, fails sends still waiting with `.closed`, releases the device (an HCI
///   user channel can be bound again as soon as it returns), and then finishes `inbound`.
/// - Nothing here times out: a controller that never answers leaves the transport open and quiet.
///   Command timeouts are the Host's (Core Vol 4 Part E §4.4 leaves them to the host).
public protocol HCITransport: Sendable {
    /// Controller-to-host packets, in order. Single consumer.
    var inbound: HCIInboundPackets { get }

    /// Sends one host-to-controller packet (command, ACL, SCO or ISO).
    func send(_ packet: HCIPacket) async throws(TransportError)

    /// Closes the transport and releases the device. Safe to call more than once.
    func close() async
}
