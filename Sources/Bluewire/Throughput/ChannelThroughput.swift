import BluewireCore
import BluewireL2CAP

/// Throughput over an LE Credit Based channel (Core Vol 3 Part A §4.22, §10.1) on an `EngineHost`:
/// the `l2cap` mode of `bluewire throughput` and its source in `bluewire serve --throughput --psm`.
///
/// Each SDU starts with its sequence number (UInt32, little-endian, from 0, as `ThroughputProfile`
/// packets do), so the receiving side counts lost and out-of-order SDUs with the same
/// `ThroughputSequenceTracker` as notifications. L2CAP in Basic/credit based mode has no
/// retransmission of its own, so a gap can only come from a stack dropping an SDU.
public enum ChannelThroughput {
    /// The source side: sends SDUs of `sduLength` octets (default and at most the peer's MTU, at
    /// least the 4-octet sequence number), numbered from 0, as fast as the peer's credits allow,
    /// until the channel ends. Returns how many SDUs were sent and why the channel ended.
    public static func stream(on channel: L2CAPChannel, sduLength: Int? = nil) async -> (sent: Int, end: L2CAPChannelError) {
        let length = Swift.max(ThroughputProfile.sequenceLength, Swift.min(sduLength ?? channel.peerMTU, channel.peerMTU))
        var sdu = ThroughputProfile.packet(sequence: 0, length: length)
        var sent = 0
        while true {
            ThroughputProfile.writeSequence(UInt32(truncatingIfNeeded: sent), into: &sdu)
            do throws(L2CAPChannelError) {
                try await channel.send(sdu)
            } catch {
                return (sent, error)
            }
            sent += 1
        }
    }

    /// The receiving side: opens a channel to `psm` on `connection` (our receive `mtu`, `mps` and
    /// initial `credits`, as `EngineHost.openChannel`), counts the SDUs the peer's source sends for
    /// `options.duration` (or until `options.packetLimit` SDUs), then closes the channel. `progress`
    /// is called about every `options.progressInterval` from another task.
    ///
    /// The run starts before the channel is opened: the source may send as soon as it has answered,
    /// so SDUs can arrive before `openChannel` returns; the cost is one signaling round trip in the
    /// elapsed time. It ends at the last SDU counted. Goodput counts SDU octets only (sequence number
    /// included; no SDU length field, L2CAP, HCI or link-layer headers). Times come from the host's
    /// clock.
    public static func measure(
        host: EngineHost, connection: UInt16, psm: SPSM, mtu: Int = 512, mps: Int = 247, credits: Int = 16,
        options: ThroughputOptions, progress: @escaping @Sendable (ThroughputProgress) -> Void = { _ in }
    ) async throws(ThroughputError) -> ThroughputReport {
        let clock = host.clock
        let start = clock.now
        let channel: L2CAPChannel
        do {
            channel = try await host.openChannel(connection: connection, psm: psm, mtu: mtu, mps: mps, credits: credits)
        } catch {
            throw .channel(error)
        }
        let meter = ThroughputMeter(start: start, countsLoss: true)
        let limit = options.packetLimit
        let receiver = Task { () -> L2CAPChannelError? in
            do throws(L2CAPChannelError) {
                for try await sdu in channel.sdus {
                    meter.received(sdu[...], at: clock.now)
                    if let limit, meter.packets >= limit { break }
                }
            } catch {
                // Cancelled at the end of the run: not a failure.
                return error == .cancelled ? nil : error
            }
            // The source closed the channel before the end: the run ends there.
            return nil
        }
        let failure = await ThroughputClient.run(
            receiver, clock: clock, meter: meter, start: start, options: options, progress: progress)
        await channel.close()
        if let failure { throw .channel(failure) }
        let state = meter.snapshot()
        return ThroughputReport(
            mode: .l2cap, mtu: channel.mtu, payloadLength: state.largestPacket, elapsed: (state.lastPacket ?? clock.now) - start,
            packets: state.tracker.packets, octets: state.tracker.octets, lost: state.tracker.lost,
            outOfOrder: state.tracker.outOfOrder)
    }
}
