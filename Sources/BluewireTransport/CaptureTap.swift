import BluewireCore
import BluewireSnoop
import Synchronization

/// A transport decorator that writes every packet crossing it, both directions, to a btsnoop file
/// (datalink 1002, H4), as `--capture FILE` does.
///
/// Host-to-controller packets are recorded as they are handed to `send` (before the controller can
/// answer, so a command always precedes its Command Complete in the file); controller-to-host packets
/// as the consumer of `inbound` receives them. Timestamps are wall-clock time. A capture that cannot
/// be written never disturbs the transport: the first write error is kept in `captureError`.
public final class CaptureTap: HCITransport {
    private struct Recorder {
        var writer: CaptureFileWriter?
        var error: CaptureFileError?

        mutating func record(_ packet: HCIPacket, _ direction: PacketDirection) {
            guard let writer, error == nil else { return }
            let timestamp = BTSnoopWriter.timestamp(unixMicroseconds: wallClockMicroseconds())
            do throws(CaptureFileError) {
                try writer.write(packet, direction: direction, timestamp: timestamp)
            } catch {
                self.error = error
            }
        }
    }

    /// The wrapped transport.
    public let base: any HCITransport
    // The writer is a non-Sendable class; the mutex is its only owner, so every use is serialised.
    private let recorder: Mutex<Recorder>

    /// Wraps `base`, writing to `writer` (which the tap now owns and closes).
    public init(wrapping base: any HCITransport, writer: sending CaptureFileWriter) {
        self.base = base
        recorder = Mutex(Recorder(writer: writer))
    }

    /// Wraps `base`, creating (or truncating) the btsnoop file at `path`.
    public convenience init(wrapping base: any HCITransport, path: String) throws(CaptureFileError) {
        self.init(wrapping: base, writer: try CaptureFileWriter(path: path))
    }

    /// The first error writing the capture, if any (the transport keeps working regardless).
    public var captureError: CaptureFileError? {
        recorder.withLock { $0.error }
    }

    public var inbound: HCIInboundPackets {
        base.inbound.observing { [recorder = self] packet in
            recorder.record(packet, .controllerToHost)
        }
    }

    public func send(_ packet: HCIPacket) async throws(TransportError) {
        record(packet, .hostToController)
        try await base.send(packet)
    }

    /// Closes the wrapped transport, then flushes and closes the capture file.
    public func close() async {
        await base.close()
        recorder.withLock { recorder in
            guard let writer = recorder.writer else { return }
            recorder.writer = nil
            do throws(CaptureFileError) {
                try writer.close()
            } catch {
                if recorder.error == nil { recorder.error = error }
            }
        }
    }

    /// Writes everything recorded so far to the file (the tap also flushes on `close()`).
    public func flush() {
        recorder.withLock { recorder in
            do throws(CaptureFileError) {
                try recorder.writer?.flush()
            } catch {
                if recorder.error == nil { recorder.error = error }
            }
        }
    }

    private func record(_ packet: HCIPacket, _ direction: PacketDirection) {
        recorder.withLock { $0.record(packet, direction) }
    }
}
