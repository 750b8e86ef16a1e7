import Bluewire
import Foundation

/// `bluewire throughput ADDR --mode l2cap --psm P`: on an `EngineHost`, connects, opens an LE
/// credit based channel to P and counts the SDUs the peer's source sends (`ChannelThroughput`),
/// with the same progress line and report as the GATT modes.
extension ThroughputCommand {
    func runOnChannel(peer: BluetoothAddress, psm: SPSM) async {
        let (host, session, link, interrupts) = await connectWithEngine(live: live, peer: peer, connectTimeout: 10)
        defer { interrupts.cancel() }
        let options = ThroughputOptions(
            mode: .l2cap, duration: .microseconds(Int64(duration * 1_000_000)), packetLimit: packets, exchangesMTU: false)
        let progressLine = ThroughputProgressLine(mode: .l2cap)
        let report: ThroughputReport
        do {
            report = try await ChannelThroughput.measure(
                host: host, connection: link.handle, psm: psm, mtu: mtu ?? 512, options: options) { progressLine.show($0) }
        } catch {
            progressLine.finish()
            await session.finish()
            fail("\(peer): \(error)")
        }
        progressLine.finish()
        await session.finish()
        ThroughputReportOutput.print(report, json: json)
    }
}
