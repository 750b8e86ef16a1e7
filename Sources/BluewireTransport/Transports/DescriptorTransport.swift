import BluewireCore

/// An `HCITransport` over one file descriptor: a TCP or Unix stream, a UART or pty, or the HCI user
/// channel socket (see `DescriptorIOLoop` for how the I/O runs).
///
/// The I/O thread holds the loop, not this object, so a transport dropped without `close()` is
/// still closed (in `deinit`): its thread ends and its device is released.
final class DescriptorTransport: HCITransport {
    let loop: DescriptorIOLoop

    init(descriptor: FileDescriptor, isSocket: Bool, framing: DescriptorIOLoop.Framing) throws(TransportError) {
        loop = try DescriptorIOLoop(descriptor: descriptor, isSocket: isSocket, framing: framing)
    }

    deinit { loop.requestClose() }

    var inbound: HCIInboundPackets { loop.inbound }

    func send(_ packet: HCIPacket) async throws(TransportError) {
        try await loop.send(packet)
    }

    func close() async {
        await loop.close()
    }
}
