import BluewireCore
import BluewireSnoop

/// A transport decorator that writes every packet crossing it, both directions, to a btsnoop file
/// (datalink 1002, H4), as `--capture FILE` does.
///
/// Host-to-controller packets are recorded as they are handed to `send` (before the controller can
/// answer, so a command always precedes its Command Complete in the file); controller-to-host packets
/// as the consumer of `inbound` receives them. Timestamps are wall-clock time, taken then.
///
/// Recording a packet only queues it in memory (the packet's storage is shared, not copied; the
/// queue's capacity is reused, so nothing is allocated per packet in steady state); a thread of the
/// tap's own encodes and writes the queue to the file in the order the tap saw the packets. So the
/// caller (the host's executor) never waits for the file system. At most `maximumQueuedBytes` wait
/// for the writer: a packet that finds the queue full is left out of the file and counted in
/// `droppedPackets` and in the cumulative drops field of the records after it, so that a stuck disk
/// costs a bounded amount of memory rather than stalling or exhausting the host.
///
/// A capture that cannot be written never disturbs the transport: the first write error is kept in
/// `captureError` and later packets are not recorded. `close()` (or `flush()`) returns once
/// everything recorded before it is in the file.
public final class CaptureTap: HCITransport {
    /// The default bound on packets waiting for the writer thread (payload plus record header bytes).
    public static let defaultMaximumQueuedBytes = 16 * 1024 * 1024

    /// The wrapped transport.
    public let base: any HCITransport
    private let loop: CaptureWriterLoop

    /// Wraps `base`, writing to `writer` (which the tap now owns, writes from its own thread and
    /// closes).
    public init(
        wrapping base: any HCITransport, writer: sending CaptureFileWriter,
        maximumQueuedBytes: Int = CaptureTap.defaultMaximumQueuedBytes
    ) {
        self.base = base
        loop = CaptureWriterLoop(writer: writer, maximumQueuedBytes: maximumQueuedBytes)
    }

    /// Wraps `base`, creating (or truncating) the btsnoop file at `path`.
    public convenience init(
        wrapping base: any HCITransport, path: String,
        maximumQueuedBytes: Int = CaptureTap.defaultMaximumQueuedBytes
    ) throws(CaptureFileError) {
        self.init(wrapping: base, writer: try CaptureFileWriter(path: path), maximumQueuedBytes: maximumQueuedBytes)
    }

    deinit {
        loop.requestClose()
    }

    /// The first error writing the capture, if any (the transport keeps working regardless).
    public var captureError: CaptureFileError? {
        loop.error
    }

    /// Packets left out of the file because `maximumQueuedBytes` were already waiting for it.
    public var droppedPackets: Int {
        loop.droppedPackets
    }

    public var inbound: HCIInboundPackets {
        base.inbound.observing { [loop] packet in
            loop.append(packet, .controllerToHost, timestamp: wallClockMicroseconds())
        }
    }

    public func send(_ packet: HCIPacket) async throws(TransportError) {
        loop.append(packet, .hostToController, timestamp: wallClockMicroseconds())
        try await base.send(packet)
    }

    /// Closes the wrapped transport, then waits (suspended, not blocking) until everything recorded
    /// is in the file, and closes it. Packets crossing the tap afterwards are not recorded.
    public func close() async {
        await base.close()
        await loop.close()
    }

    /// Returns once everything recorded so far is in the file (the tap also flushes on `close()`).
    public func flush() async {
        await loop.flush()
    }
}
