import Bluewire
import BluewireCore
import Foundation
import Synchronization

/// The live progress line of `bluewire throughput` on stderr: redrawn in place on a terminal, one
/// line per update otherwise (so a log keeps every sample).
final class ThroughputProgressLine: Sendable {
    let mode: ThroughputMode
    let isTerminal = isatty(STDERR_FILENO) == 1
    private let drawn = Mutex(false)

    init(mode: ThroughputMode) { self.mode = mode }

    func show(_ progress: ThroughputProgress) {
        let seconds = Double(progress.elapsed.microseconds) / 1_000_000
        let unit = mode == .l2cap ? "SDUs" : "packets"
        var line = String(format: "%6.1f s  %9.1f kbit/s  %9d ", seconds, progress.intervalKilobitsPerSecond, progress.packets) + unit
        if let lost = progress.lost { line += "  \(lost) lost" }
        write(isTerminal ? "\r\u{1B}[K" + line : line + "\n")
        drawn.withLock { $0 = true }
    }

    /// Ends the line in place, so what follows starts on a line of its own.
    func finish() {
        if isTerminal, drawn.withLock({ $0 }) { write("\n") }
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}

/// The final report of `bluewire throughput` on stdout, as text or one JSON object.
enum ThroughputReportOutput {
    static func print(_ report: ThroughputReport, json: Bool) {
        let text = json ? jsonLine(report) : lines(report).joined(separator: "\n")
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func lines(_ report: ThroughputReport) -> [String] {
        let seconds = Double(report.elapsed.microseconds) / 1_000_000
        // A channel moves SDUs under the channel's MTU; GATT moves packets under the ATT_MTU.
        let (mtuName, unit) = report.mode == .l2cap ? ("MTU", "SDUs") : ("ATT_MTU", "packets")
        var lines = [
            "mode \(report.mode.rawValue), \(mtuName) \(report.mtu), \(report.payloadLength)-octet \(unit), \(String(format: "%.3f", seconds)) s",
            String(format: "goodput %.1f kbit/s, %.1f \(unit)/s", report.kilobitsPerSecond, report.packetsPerSecond),
        ]
        if let phy = report.phy { lines.append("PHY \(phyName(phy.tx)) transmit, \(phyName(phy.rx)) receive") }
        var counts = "\(report.packets) \(unit) (\(report.octets) octets) arrived"
        if let sent = report.sent { counts += ", \(sent) sent" }
        lines.append(counts)
        if let lost = report.lost, let outOfOrder = report.outOfOrder {
            lines.append("\(lost) lost, \(outOfOrder) out of order")
        } else {
            lines.append("loss unknown (the peer has no Bluewire sink report)")
        }
        if let latency = report.latency {
            lines.append("latency p50 \(ms(latency.p50)) ms, p90 \(ms(latency.p90)) ms, p99 \(ms(latency.p99)) ms "
                + "(min \(ms(latency.minimum)), max \(ms(latency.maximum)), \(latency.samples) round trips)")
        }
        return lines
    }

    static func jsonLine(_ report: ThroughputReport) -> String {
        var object: [String: any Sendable] = [
            "mode": report.mode.rawValue, "mtu": report.mtu, "payload_length": report.payloadLength,
            "elapsed_seconds": (Double(report.elapsed.microseconds) / 1_000).rounded() / 1_000,
            "packets": report.packets, "octets": report.octets,
            "kilobits_per_second": rounded(report.kilobitsPerSecond), "packets_per_second": rounded(report.packetsPerSecond),
        ]
        if let sent = report.sent { object["sent"] = sent }
        if let phy = report.phy { object["phy"] = ["tx": phyName(phy.tx), "rx": phyName(phy.rx)] as [String: any Sendable] }
        object["lost"] = report.lost.map { $0 as any Sendable } ?? NSNull()
        object["out_of_order"] = report.outOfOrder.map { $0 as any Sendable } ?? NSNull()
        if let latency = report.latency {
            object["latency_microseconds"] = [
                "samples": latency.samples, "min": latency.minimum.microseconds, "p50": latency.p50.microseconds,
                "p90": latency.p90.microseconds, "p99": latency.p99.microseconds, "max": latency.maximum.microseconds,
            ] as [String: any Sendable]
        }
        return JSONLine.make(object)
    }

    static func phyName(_ phy: UInt8) -> String {
        switch phy {
        case 1: "1m"
        case 2: "2m"
        case 3: "coded"
        default: "0x\(hex(phy, width: 2))"
        }
    }

    static func ms(_ span: TimeSpan) -> String { String(format: "%.2f", Double(span.microseconds) / 1_000) }

    static func rounded(_ value: Double) -> Double { (value * 10).rounded() / 10 }
}
