import BluewireCore
import BluewireHostEngine

extension EngineThroughputClient {
    /// write-without-response and write (see the type's documentation): the same report as
    /// `ThroughputClient.measureWrites`.
    func measureWrites(
        _ valueHandle: UInt16, report reportHandle: UInt16?, length: Int, _ options: ThroughputOptions, mtu: Int,
        progress: @escaping @Sendable (ThroughputProgress) -> Void
    ) async throws(ThroughputError) -> ThroughputReport {
        if let reportHandle { _ = try await perform(.write(handle: reportHandle, value: [0])) }
        let host = self.host, connection = self.connection, handle = self.handle, clock = host.clock
        let start = clock.now
        let meter = ThroughputMeter(start: start, countsLoss: false)
        let mode = options.mode, limit = options.packetLimit
        let worker: Task<ThroughputError?, Never>
        let ticker: Task<Void, Never>
        if mode == .writeWithoutResponse {
            // The engine sends them all; this side only reads how far it got.
            worker = Task {
                let stream = ATTStream(pdu: .writeCommand, valueHandle: valueHandle, length: length, limit: limit)
                switch await host.perform(.streamATT(connection: handle, stream)) {
                case .success(.streamed(let sent, let end)):
                    meter.sentUpTo(sent, octets: length, at: clock.now)
                    if case .disconnected(let reason) = end { return .disconnected(reason) }
                    return nil
                case .success: return nil
                case .failure(let error): return Self.map(error)
                }
            }
            ticker = Task {
                await Self.tick(host: host, handle: handle, length: length, meter: meter, start: start, options: options, progress: progress)
                // The stream ends once the controller has taken what it queued: the worker returns then.
                _ = await host.perform(.stopATTStream(connection: handle, .writeCommand))
            }
        } else {
            worker = Task {
                var value = ThroughputProfile.packet(sequence: 0, length: length)
                var sequence: UInt32 = 0
                while !meter.stopRequested, !Task.isCancelled {
                    if let limit, Int(sequence) >= limit { break }
                    ThroughputProfile.writeSequence(sequence, into: &value)
                    let sentAt = clock.now
                    do throws(HostEngineError) {
                        _ = try await connection.perform(.write(handle: valueHandle, value: value))
                    } catch {
                        return Self.map(error)
                    }
                    let answeredAt = clock.now
                    meter.sent(octets: value.count, at: answeredAt, latency: answeredAt - sentAt)
                    sequence &+= 1
                }
                return nil
            }
            ticker = Task {
                await ThroughputClient.tick(clock: clock, meter: meter, start: start, options: options, progress: progress)
                // A Write Request in flight is answered first.
                meter.requestStop()
            }
        }
        let failure = await withTaskCancellationHandler {
            await worker.value
        } onCancel: {
            worker.cancel()
        }
        ticker.cancel()
        if let failure { throw failure }
        let state = meter.snapshot()
        var end = state.lastPacket ?? clock.now
        var sink: ThroughputSinkReport?
        if let reportHandle {
            // The Read Request leaves after every write, so its answer counts them all.
            guard case .value(let value) = try await perform(.read(handle: reportHandle)) else { throw .characteristicNotFound(handle: reportHandle, mode: mode) }
            sink = ThroughputSinkReport(decoding: value)
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

    /// `ThroughputClient.tick` for a stream the engine runs: before each progress call the meter
    /// catches up with what the engine has sent.
    static func tick(
        host: EngineHost, handle: UInt16, length: Int, meter: ThroughputMeter, start: MonotonicInstant, options: ThroughputOptions,
        progress: @Sendable (ThroughputProgress) -> Void
    ) async {
        let clock = host.clock
        let deadline = start + options.duration
        let interval = options.progressInterval
        var next = start + interval
        while !Task.isCancelled {
            let wake = interval.microseconds > 0 ? Swift.min(next, deadline) : deadline
            do { try await clock.sleep(until: wake) } catch { return }
            if wake >= deadline { return }
            if let sent = await host.attStreamSent(connection: handle, pdu: .writeCommand) {
                meter.sentUpTo(sent, octets: length, at: clock.now)
            }
            progress(meter.progress(at: clock.now))
            next = next + interval
        }
    }
}
