import Foundation
import Testing
import BluewireCore
@testable import BluewireHCI

/// Advertising reports have fast paths (`HCIEvent(decoding:)` recognising a complete report event,
/// `LEReport.init?(wellFormed:at:)` per report) next to the field-by-field decoders. They must
/// agree with those decoders on every input: same values, same errors, same reports kept.
@Suite struct AdvertisingReportFastPathTests {
    /// The distinct LE Advertising, Directed Advertising and Extended Advertising Report events
    /// (payload after the H4 byte) of the btsnoop captures.
    static let realReportEvents: [[UInt8]] = {
        var seen = Set<[UInt8]>()
        for file in RealCaptureDecodingTests.btsnoopFiles {
            let url = RealCaptureDecodingTests.directory.appendingPathComponent(file.file)
            guard let bytes = try? [UInt8](Data(contentsOf: url)) else { continue }
            for record in RealCaptureDecodingTests.records(bytes) {
                let payload = Array(record.dropFirst())
                guard record.first == 0x04, payload.count > 2, payload[0] == 0x3E,
                    [0x02, 0x0B, 0x0D].contains(payload[2])
                else { continue }
                seen.insert(payload)
            }
        }
        return seen.sorted { $0.lexicographicallyPrecedes($1) }
    }()

    /// Hand-made events: two legacy reports, a directed report, and a second report overrunning
    /// the event (from AdvertisingReportTests).
    static let madeEvents: [[UInt8]] = [
        eventPayload("043e21020200019c6a276a48480b02011a07ff4c0010020b00b804019c6a276a484800b8"),
        eventPayload("043e12 0b 01 01 01 060504030201 01 0c0b0a090807 c4"),
        eventPayload("043e19 02 02 00 01 9c6a276a4848 03 020106 b8 04 01 9c6a276a4848 09 01"),
    ]

    static func decoded(_ payload: ArraySlice<UInt8>, checked: Bool) -> Result<HCIEvent, DecodeError> {
        do throws(DecodeError) {
            return .success(checked ? try HCIEvent(checkedDecoding: payload) : try HCIEvent(decoding: payload))
        } catch {
            return .failure(error)
        }
    }

    /// The event cut short, and with every Parameter_Total_Length from 0 to what is there, so that
    /// reports overrun the event at every octet.
    static func variants(of event: [UInt8]) -> [[UInt8]] {
        var out: [[UInt8]] = (0...event.count).map { Array(event[..<$0]) }
        if event.count >= 2 {
            for length in 0...(event.count - 2) {
                var copy = event
                copy[1] = UInt8(length)
                out.append(copy)
            }
        }
        return out
    }

    @Test func capturesHoldAdvertisingReportEvents() {
        #expect(Self.realReportEvents.count > 100, "expected the captures' advertising report events, found \(Self.realReportEvents.count)")
    }

    @Test func eventFastPathEqualsCheckedDecodingOnEveryTruncationOfRealEvents() {
        var differences: [String] = []
        for event in Self.realReportEvents + Self.madeEvents {
            for variant in Self.variants(of: event) {
                // A slice not starting at index 0, as events arrive inside larger buffers.
                let buffer = [0xAA, 0xBB] + variant
                let payload = buffer[2...]
                let fast = Self.decoded(payload, checked: false)
                let checked = Self.decoded(payload, checked: true)
                if fast != checked { differences.append("\(hexString(variant)): \(fast) vs \(checked)") }
            }
        }
        #expect(differences.isEmpty, "\(differences.count) differ, first: \(differences.first ?? "")")
    }

    /// Both report decoders from `start` in `bytes`: equal reports and end index, or both refuse.
    static func compare<Report: LEReport>(_: Report.Type, _ bytes: ArraySlice<UInt8>, start: Int) -> String? {
        var index = start
        let fast = Report(wellFormed: bytes, at: &index)
        var reader = ByteReader(bytes, layer: "hci")
        let checked: Report? = (try? reader.skip(start - bytes.startIndex, "Num_Reports")).flatMap { try? Report(decoding: &reader) }
        if fast != checked { return "fast \(String(describing: fast)), checked \(String(describing: checked))" }
        if fast != nil, index != reader.index { return "fast ends at \(index), checked at \(reader.index)" }
        if fast == nil, index != start { return "a refused report moved the index to \(index)" }
        return nil
    }

    @Test func wellFormedReportDecodingEqualsCheckedDecodingOnEveryTruncation() {
        var differences: [String] = []
        for event in Self.realReportEvents + Self.madeEvents where event.count > 4 {
            // Reports start after Event_Code, Parameter_Total_Length, Subevent_Code, Num_Reports.
            let buffer = [0xAA] + event
            for end in 5...buffer.count {
                let bytes = buffer[1..<end]
                for start in [5, 6] where start <= end {
                    let difference: String?
                    switch event[2] {
                    case 0x02: difference = Self.compare(LEAdvertisingReport.self, bytes, start: start)
                    case 0x0B: difference = Self.compare(LEDirectedAdvertisingReport.self, bytes, start: start)
                    default: difference = Self.compare(LEExtendedAdvertisingReport.self, bytes, start: start)
                    }
                    if let difference { differences.append("\(hexString(event)) to \(end), from \(start): \(difference)") }
                }
            }
        }
        #expect(differences.isEmpty, "\(differences.count) differ, first: \(differences.first ?? "")")
    }

    @Test func validCountAndErrorAgreeWithIterationOnEveryTruncation() throws {
        var differences: [String] = []
        for event in Self.realReportEvents + Self.madeEvents {
            for variant in Self.variants(of: event) {
                guard case .leMeta(let meta)? = try? HCIEvent(decoding: variant) else { continue }
                let (iterated, validCount, error, numReports): (Int, Int, DecodeError?, UInt8)
                switch meta {
                case .advertisingReport(let list): (iterated, validCount, error, numReports) = (Array(list).count, list.validCount, list.error, list.numReports)
                case .extendedAdvertisingReport(let list): (iterated, validCount, error, numReports) = (Array(list).count, list.validCount, list.error, list.numReports)
                case .directedAdvertisingReport(let list): (iterated, validCount, error, numReports) = (Array(list).count, list.validCount, list.error, list.numReports)
                default: continue
                }
                if iterated != validCount || (error == nil) != (validCount == Int(numReports)) {
                    differences.append("\(hexString(variant)): iterated \(iterated), validCount \(validCount), error \(String(describing: error))")
                }
            }
        }
        #expect(differences.isEmpty, "\(differences.count) differ, first: \(differences.first ?? "")")
    }
}
