import BluewireCore
import BluewireTransport
import Synchronization

/// A `VirtualController` presented as the Host's transport: what the Host sends goes straight into the
/// controller, what the controller produces comes out of `inbound` in order.
///
/// ```swift
/// let link = VirtualLink()
/// let central = VirtualTransport(controller: link.addController(publicAddress: addressA))
/// let peripheral = VirtualTransport(controller: link.addController(publicAddress: addressB))
/// // two Hosts on these transports now see each other's advertising, connect and exchange data
/// ```
///
/// `send` hands the packet to the controller synchronously (so sends keep the order their calls started
/// in) and never suspends for long; nothing here times out, as the `HCITransport` contract requires.
/// Packets the controller produces later (a peer's data, the clock reaching a timer) are yielded to
/// `inbound` as they happen. Anything produced before the transport was made is delivered first.
public final class VirtualTransport: HCITransport {
    public let controller: VirtualController
    public let inbound: HCIInboundPackets
    private let continuation: HCIInboundPackets.Continuation
    private let isClosed = Mutex(false)

    public init(controller: VirtualController) {
        self.controller = controller
        let (packets, continuation) = HCIInboundPackets.makeStream()
        inbound = packets
        self.continuation = continuation
        // Yielding only enqueues, so it is safe to run with the link locked.
        controller.setOutputHandler { continuation.yield($0) }
    }

    public func send(_ packet: HCIPacket) async throws(TransportError) {
        guard !isClosed.withLock({ $0 }) else { throw .closed }
        controller.receive(hostPacket: packet)
    }

    /// Detaches from the controller (which keeps its state and queues its output again, so a new
    /// transport on it resumes where this one stopped, like a host reconnecting to a UART) and ends
    /// `inbound`.
    public func close() async {
        let wasClosed = isClosed.withLock { closed in
            defer { closed = true }
            return closed
        }
        guard !wasClosed else { return }
        controller.setOutputHandler(nil)
        continuation.finish()
    }
}
