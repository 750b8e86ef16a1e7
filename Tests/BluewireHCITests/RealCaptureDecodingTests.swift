import Foundation
import Testing
import BluewireCore
@testable import BluewireHCI

/// Decodes every HCI command and event of the repository's real captures (`Captures/`) and compares
/// the LE subevent histogram and advertising report totals with tshark's counts in `INDEX.json`.
@Suite struct RealCaptureDecodingTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Captures")

    struct Expected: Sendable, CustomStringConvertible {
        var file: String
        var subevents: [String: Int]
        var legacyReports: Int
        var extendedReports: Int
        var description: String { file }
    }

    static let btsnoopFiles: [Expected] = {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("INDEX.json")),
              let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let files = json["files"] as? [[String: Any]] else { return [] }
        return files.compactMap { file in
            guard file["container"] as? String == "btsnoop", file["datalink"] as? Int == 1002,
                  let name = file["file"] as? String, let tshark = file["tshark"] as? [String: Any] else { return nil }
            return Expected(
                file: name, subevents: tshark["le_meta_subevent_hist"] as? [String: Int] ?? [:],
                legacyReports: tshark["le_adv_reports_total"] as? Int ?? -1,
                extendedReports: tshark["le_ext_adv_reports_total"] as? Int ?? -1)
        }
    }()

    /// H4 records of a btsnoop 1002 file (16-byte header, 24-byte big-endian record headers).
    static func records(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var out: [ArraySlice<UInt8>] = []
        var i = 16
        func be32(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        while i + 24 <= bytes.count {
            let length = be32(i + 4)
            i += 24
            guard i + length <= bytes.count else { break }
            out.append(bytes[i..<i + length])
            i += length
        }
        return out
    }

    @Test func indexListsTheBtsnoopCaptures() {
        #expect(Self.btsnoopFiles.count >= 5, "INDEX.json not found or changed under \(Self.directory.path)")
    }

    @Test(arguments: btsnoopFiles)
    func everyPacketDecodesAndCountsMatchTshark(_ expected: Expected) throws {
        let bytes = try [UInt8](Data(contentsOf: Self.directory.appendingPathComponent(expected.file)))
        var subevents: [String: Int] = [:]
        var legacy = 0
        var extended = 0
        var failures: [String] = []
        for record in Self.records(bytes) {
            guard let type = record.first else { continue }
            let payload = record.dropFirst()
            do {
                switch type {
                case 0x01:
                    _ = try HCICommand(decoding: payload)
                case 0x04:
                    let event = try HCIEvent(decoding: payload)
                    guard case .leMeta(let meta) = event else { continue }
                    let key = "0x" + hex(meta.subeventCode.rawValue, width: 2)
                    subevents[key, default: 0] += 1
                    switch meta {
                    case .advertisingReport(let reports):
                        if let error = reports.error { failures.append("\(error)") }
                        legacy += reports.reduce(0) { n, _ in n + 1 }
                    case .extendedAdvertisingReport(let reports):
                        if let error = reports.error { failures.append("\(error)") }
                        extended += reports.reduce(0) { n, _ in n + 1 }
                    default: break
                    }
                default:
                    continue
                }
            } catch {
                failures.append("\(error) in \(hexString(record))")
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        #expect(subevents == expected.subevents)
        #expect(legacy == expected.legacyReports)
        #expect(extended == expected.extendedReports)
    }
}
