import Bluewire
import Foundation

/// `bluewire throughput ADDR --mode notify|write-without-response|write`: on an `EngineHost`,
/// connects, offers `--mtu` (default 517) and measures with `EngineThroughputClient`; the engine
/// paces what it sends by the controller's ACL buffers.
extension ThroughputCommand {
    func runOnEngine(peer: BluetoothAddress, mode: ThroughputMode) async {
        let offered = UInt16(mtu ?? 517)
        let (host, session, link, interrupts) = await connectWithEngine(
            live: live, peer: peer, connectTimeout: 10, replayable: true,
            adjust: { configuration in
                configuration.preferredMTU = offered
                // Nothing is written to the peer's database but what the run measures: no Client
                // Supported Features declaration (neither EATT nor Multiple Handle Value Notifications is used).
                configuration.clientFeatures = []
            })
        defer { interrupts.cancel() }
        let options = ThroughputOptions(
            mode: mode, duration: .microseconds(Int64(duration * 1_000_000)), valueHandle: handle.flatMap(Self.parseHandle),
            payloadLength: length, packetLimit: packets, phy: phy.flatMap(Self.parsePHY))
        let progressLine = ThroughputProgressLine(mode: mode)
        let report: ThroughputReport
        do {
            report = try await EngineThroughputClient(connection: host.connection(link)).run(options) { progressLine.show($0) }
        } catch {
            progressLine.finish()
            await session.finish()
            fail("\(peer): \(error)")
        }
        progressLine.finish()
        await session.finish()
        if report.phyRequestFailed, let asked = phy {
            let used = report.phy.map { "LE \(ThroughputReportOutput.phyName($0.tx).uppercased()) transmit, \(ThroughputReportOutput.phyName($0.rx).uppercased()) receive" } ?? "an unknown PHY"
            FileHandle.standardError.write(Data("bluewire: warning: the PHY did not change to \(asked) (refused or no answer): measured on \(used)\n".utf8))
        }
        ThroughputReportOutput.print(report, json: json)
    }
}
