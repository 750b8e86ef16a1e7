import Benchmark
import BluewireCore
import BluewireHCI
import BluewireSnoop
import Foundation

/// Advertising report parsing over real report bytes from Captures/: decode the HCI event, iterate
/// its reports (legacy 0x02 or extended 0x0D), and walk every report's AD structures, interpreting
/// each one's value. This is what a scan does per report before aggregation.
///
/// One scaled iteration handles one event; the captures' report events each carry one report
/// (tshark: frames == reports for both files), so the time shown per iteration is per report.
/// Goal (issue 3): at most 100 ns and 0 allocations per report.
let capturesDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Captures")

/// The HCI event payloads (code, length, parameters) of every LE Meta event with `subevent`.
func reportEvents(_ name: String, subevent: UInt8) -> [ArraySlice<UInt8>] {
    let bytes = (try? [UInt8](Data(contentsOf: capturesDirectory.appendingPathComponent(name)))) ?? []
    var reader = CaptureReader()
    reader.feed(bytes)
    reader.finishInput()
    var events: [ArraySlice<UInt8>] = []
    while let record = try? reader.next() {
        guard case .packet(let packet) = record.content, packet.type == .event else { continue }
        let payload = packet.payload
        guard payload.count > 2, payload[payload.startIndex] == 0x3E, payload[payload.startIndex + 2] == subevent else { continue }
        // A copy of its own: the benchmark must not measure slicing into a large capture buffer.
        events.append(ArraySlice(Array(payload)))
    }
    return events
}

/// Walks every AD structure of `data`, folding the interpreted values into a checksum.
@inline(__always)
func walk(_ data: AdvertisingData) -> Int {
    var sum = 0
    for structure in data {
        switch structure.value {
        case .localName(let name, _): sum &+= name.count
        case .serviceUUIDs(let list, _): for uuid in list { sum &+= Int(truncatingIfNeeded: uuid.low) }
        case .manufacturerSpecificData(let company, let payload): sum &+= Int(company) &+ payload.count
        case .serviceData(let uuid, let payload): sum &+= Int(truncatingIfNeeded: uuid.high) &+ payload.count
        case .flags(let flags): sum &+= Int(flags.rawValue)
        case .txPowerLevel(let level): sum &+= Int(level)
        default: sum &+= structure.data.count
        }
    }
    return sum
}

/// Walks the AD structures' framing only (type and length), without interpreting values.
@inline(__always)
func walkFraming(_ data: AdvertisingData) -> Int {
    var sum = 0
    for structure in data { sum &+= Int(structure.type.rawValue) &+ structure.data.count }
    return sum
}

/// Decodes the event and iterates its reports, touching each report's fields but not its data.
@inline(__always)
func iterateReports(_ event: ArraySlice<UInt8>) -> Int {
    guard let decoded = try? HCIEvent(decoding: event), case .leMeta(let meta) = decoded else { return -1 }
    var sum = 0
    switch meta {
    case .advertisingReport(let reports):
        for report in reports { sum &+= Int(report.rssi) &+ report.data.count &+ Int(truncatingIfNeeded: report.address.value) }
    case .extendedAdvertisingReport(let reports):
        for report in reports { sum &+= Int(report.rssi) &+ report.data.count &+ Int(truncatingIfNeeded: report.address.value) }
    default:
        break
    }
    return sum
}

@inline(__always)
func parse(_ event: ArraySlice<UInt8>) -> Int {
    guard let decoded = try? HCIEvent(decoding: event), case .leMeta(let meta) = decoded else { return -1 }
    var sum = 0
    switch meta {
    case .advertisingReport(let reports):
        for report in reports { sum &+= Int(report.rssi) &+ walk(report.advertisingData) }
    case .extendedAdvertisingReport(let reports):
        for report in reports { sum &+= Int(report.rssi) &+ walk(report.advertisingData) }
    default:
        break
    }
    return sum
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .instructions, .throughput],
        scalingFactor: .kilo, maxDuration: .seconds(2), maxIterations: 500)

    let sources: [(label: String, file: String, subevent: UInt8)] = [
        ("legacy 0x02 (ec521 Mi Band scan)", "ec521_miband2_scan_pairing.btsnoop_hci.log", 0x02),
        ("extended 0x0D (btsnooper)", "btsnooper_gatt_reads_extadv.btsnoop_hci.log", 0x0D),
        ("extended 0x0D (oppo earbuds)", "oppo_earbuds_dualmode.cfa", 0x0D),
    ]
    for source in sources {
        let events = reportEvents(source.file, subevent: source.subevent)
        guard !events.isEmpty else { continue }
        let bytes = events.map(\.count).reduce(0, +)
        Benchmark("report + AD walk, \(source.label): \(events.count) events, avg \(bytes / events.count) B") { benchmark in
            var index = 0
            var sum = 0
            for _ in benchmark.scaledIterations {
                sum &+= parse(events[index])
                index += 1
                if index == events.count { index = 0 }
            }
            blackHole(sum)
        }
        // The two halves of the above, to show where the time goes.
        Benchmark("report iteration only, \(source.label)") { benchmark in
            var index = 0
            var sum = 0
            for _ in benchmark.scaledIterations {
                sum &+= iterateReports(events[index])
                index += 1
                if index == events.count { index = 0 }
            }
            blackHole(sum)
        }
        // One report decoded field by field straight from its bytes (no HCIEvent, no LEReportList):
        // the checked decoder that says what is wrong with a malformed report.
        let reportOffset = 5  // Event_Code, Parameter_Total_Length, Subevent_Code, Num_Reports; +1 for slicing below
        Benchmark("single report decode only, \(source.label)") { benchmark in
            var index = 0
            var sum = 0
            for _ in benchmark.scaledIterations {
                let event = events[index]
                var reader = ByteReader(event[(event.startIndex + reportOffset - 1)...], layer: "hci")
                if source.subevent == 0x02 {
                    if let report = try? LEAdvertisingReport(decoding: &reader) { sum &+= Int(report.rssi) &+ report.data.count }
                } else {
                    if let report = try? LEExtendedAdvertisingReport(decoding: &reader) { sum &+= Int(report.rssi) &+ report.data.count }
                }
                index += 1
                if index == events.count { index = 0 }
            }
            blackHole(sum)
        }
        // The same report through the fast path iteration uses (`init?(wellFormed:at:)`).
        Benchmark("single report decode only (well-formed fast path), \(source.label)") { benchmark in
            var index = 0
            var sum = 0
            for _ in benchmark.scaledIterations {
                let event = events[index]
                var position = event.startIndex + reportOffset - 1
                if source.subevent == 0x02 {
                    if let report = LEAdvertisingReport(wellFormed: event, at: &position) { sum &+= Int(report.rssi) &+ report.data.count }
                } else {
                    if let report = LEExtendedAdvertisingReport(wellFormed: event, at: &position) {
                        sum &+= Int(report.rssi) &+ report.data.count
                    }
                }
                index += 1
                if index == events.count { index = 0 }
            }
            blackHole(sum)
        }
        let payloads: [AdvertisingData] = events.flatMap { event -> [AdvertisingData] in
            guard let decoded = try? HCIEvent(decoding: event), case .leMeta(let meta) = decoded else { return [] }
            switch meta {
            case .advertisingReport(let reports): return reports.map { AdvertisingData(Array($0.data)) }
            case .extendedAdvertisingReport(let reports): return reports.map { AdvertisingData(Array($0.data)) }
            default: return []
            }
        }
        Benchmark("AD walk only (typed values), \(source.label)") { benchmark in
            var index = 0
            var sum = 0
            for _ in benchmark.scaledIterations {
                sum &+= walk(payloads[index])
                index += 1
                if index == payloads.count { index = 0 }
            }
            blackHole(sum)
        }
        Benchmark("AD walk only (framing), \(source.label)") { benchmark in
            var index = 0
            var sum = 0
            for _ in benchmark.scaledIterations {
                sum &+= walkFraming(payloads[index])
                index += 1
                if index == payloads.count { index = 0 }
            }
            blackHole(sum)
        }
    }
}
