import BluewireCore
import BluewireHostEngine

/// What the write modes of a throughput run need of their link, on either host (`ThroughputClient`
/// on a `BluetoothHost` `Connection`, `EngineThroughputClient` on an `EngineConnection`): GATT writes
/// and reads in the link's operation order, and the engine's stream of Write Commands
/// (`HostRequest.streamATT`), which the engine paces by the controller's ACL buffers (Core Vol 4 Part E
/// §4.1.1), so nothing on this side runs per packet.
protocol ThroughputWriteLink: Sendable {
    /// The host's clock: the run's times.
    var clock: any HostClock { get }
    /// A Write Request (Core Vol 3 Part F §3.4.5.1) and its response.
    func write(_ value: [UInt8], to valueHandle: UInt16) async throws(ThroughputError)
    /// A read of the whole value (the sink report).
    func read(_ valueHandle: UInt16) async throws(ThroughputError) -> [UInt8]
    /// Runs a stream of Write Commands until it ends, and returns once the controller has taken what
    /// it queued: the values sent and why it ended. Cancelling the calling task stops it.
    func streamWriteCommands(_ stream: ATTStream) async throws(ThroughputError) -> (sent: Int, end: ATTStreamEnd)
    /// Ends the running stream of Write Commands (`.stopATTStream`).
    func stopWriteCommands() async
    /// Write Commands the running stream has handed to the link's ACL queue; nil when none runs.
    func writeCommandsSent() async -> Int?
}

extension ThroughputWriteLink {
    /// write-without-response and write (see `ThroughputClient`): resets the peer's sink if it has
    /// the sink report, sends for `options.duration` (or `options.packetLimit` values), then reads
    /// the sink report.
    func measureWrites(
        _ valueHandle: UInt16, report reportHandle: UInt16?, length: Int, _ options: ThroughputOptions, mtu: Int,
        progress: @escaping @Sendable (ThroughputProgress) -> Void
    ) async throws(ThroughputError) -> ThroughputReport {
        if let reportHandle { try await write([0], to: reportHandle) }
        let clock = self.clock
        let start = clock.now
        let meter = ThroughputMeter(start: start, countsLoss: false)
        let mode = options.mode
        let failure: ThroughputError?
        if mode == .writeWithoutResponse {
            // The engine sends them all; this side only reads how far it got.
            let stream = ATTStream(pdu: .writeCommand, valueHandle: valueHandle, length: length, limit: options.packetLimit)
            let worker = Task { () -> ThroughputError? in
                do throws(ThroughputError) {
                    let streamed = try await streamWriteCommands(stream)
                    meter.sentUpTo(streamed.sent, octets: length, at: clock.now)
                    if case .disconnected(let reason) = streamed.end { return .disconnected(reason) }
                    return nil
                } catch {
                    return error
                }
            }
            failure = await ThroughputClient.run(
                worker, clock: clock, meter: meter, start: start, options: options, progress: progress,
                catchUp: { if let sent = await writeCommandsSent() { meter.sentUpTo(sent, octets: length, at: clock.now) } },
                // The stream ends once the controller has taken what it queued: the worker returns then.
                atDeadline: { await stopWriteCommands() })
        } else {
            let worker = Task { await writeRequests(valueHandle, length: length, limit: options.packetLimit, meter: meter) }
            // A Write Request in flight is answered first.
            failure = await ThroughputClient.run(
                worker, clock: clock, meter: meter, start: start, options: options, progress: progress,
                atDeadline: { meter.requestStop() })
        }
        if let failure { throw failure }
        let state = meter.snapshot()
        var end = state.lastPacket ?? clock.now
        var sink: ThroughputSinkReport?
        if let reportHandle {
            // The Read Request leaves after every write, so its answer counts them all.
            sink = ThroughputSinkReport(decoding: try await read(reportHandle))
        }
        // Write Commands: until the controller had taken the last one (the stream's end) or the sink
        // report's answer when there is one.
        if mode == .writeWithoutResponse { end = clock.now }
        return ThroughputReport(
            mode: mode, mtu: mtu, payloadLength: length, elapsed: end - start,
            packets: sink?.packets ?? state.tracker.packets, octets: sink?.octets ?? state.tracker.octets,
            sent: state.tracker.packets, lost: sink?.lost, outOfOrder: sink?.outOfOrder,
            latency: LatencyPercentiles(state.latencies))
    }

    /// Write Requests one at a time until the meter is told to stop, `limit` is reached or the task
    /// is cancelled, timing each round trip.
    func writeRequests(_ valueHandle: UInt16, length: Int, limit: Int?, meter: ThroughputMeter) async -> ThroughputError? {
        var value = ThroughputProfile.packet(sequence: 0, length: length)
        var sequence: UInt32 = 0
        while !meter.stopRequested, !Task.isCancelled {
            if let limit, Int(sequence) >= limit { break }
            ThroughputProfile.writeSequence(sequence, into: &value)
            let sentAt = clock.now
            do throws(ThroughputError) { try await write(value, to: valueHandle) } catch { return error }
            let answeredAt = clock.now
            meter.sent(octets: value.count, at: answeredAt, latency: answeredAt - sentAt)
            sequence &+= 1
        }
        return nil
    }
}
