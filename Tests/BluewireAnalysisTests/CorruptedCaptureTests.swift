import BluewireAnalysis
import BluewireCore
import BluewireSnoop
import Foundation
import Testing

/// 1,000 seeded corruptions of each real capture go through reader, describer and summary without a
/// trap: damage shows up as typed errors (a `CaptureError` from the reader, a `DecodeError` in the
/// description), never as a crash.
///
/// To keep the run short, btsnoop captures are not corrupted whole: each corruption is applied to a
/// window of 32 consecutive records (with the file header) around a random record, and only that
/// window is decoded. pcapng and header-only captures are small and are corrupted whole.
@Suite struct CorruptedCaptureTests {
    static let corruptionsPerCapture = 1_000
    static let windowRecords = 32

    enum Mutation: CaseIterable {
        case bitFlip, truncation, insertion, deletion, lengthField, randomRun
    }

    struct Window {
        var bytes: [UInt8]
        /// Start offsets of the record headers (btsnoop) or blocks; positions outside are packet data.
        var headerRanges: [Range<Int>]
        var recordCount: Int
    }

    static func windows(_ name: String) -> (records: [CaptureRecord], bytes: [UInt8]) {
        let bytes = AnalysisFixtures.bytes(name)
        return (CaptureReader.readAll(bytes).records, bytes)
    }

    static func window(_ bytes: [UInt8], _ records: [CaptureRecord], around k: Int, pcapng: Bool) -> Window {
        if pcapng || records.isEmpty {
            // Corrupt the whole file; every byte counts as header for the data-flip check.
            return Window(bytes: bytes, headerRanges: [0..<bytes.count], recordCount: records.count)
        }
        let lower = max(0, k - windowRecords / 2)
        let upper = min(records.count, lower + windowRecords)
        var out = Array(bytes[0..<16])
        var headers = [0..<16]
        for record in records[lower..<upper] {
            headers.append(out.count..<(out.count + 24))
            out += bytes[record.offset..<(record.offset + 24 + record.data.count)]
        }
        return Window(bytes: out, headerRanges: headers, recordCount: upper - lower)
    }

    /// Decodes `bytes` fed in two chunks; checks the invariants that must hold whatever the damage.
    static func decode(_ bytes: [UInt8], context: String, validateJSON: Bool) -> (records: Int, error: CaptureError?) {
        var reader = CaptureReader()
        var describer = PacketDescriber()
        var summary = CaptureSummary()
        let split = bytes.count / 3
        reader.feed(Array(bytes[0..<split]))
        var count = 0
        var lastOffset = -1
        var failure: CaptureError?
        var fedAll = false
        while true {
            do {
                guard let record = try reader.next() else {
                    if fedAll { break }
                    reader.feed(Array(bytes[split...]))
                    reader.finishInput()
                    fedAll = true
                    continue
                }
                #expect(record.index == count, "\(context): record index \(record.index), expected \(count)")
                #expect(record.offset > lastOffset && record.offset < bytes.count, "\(context): offset \(record.offset)")
                lastOffset = record.offset
                count += 1
                summary.add(record)
                let description = describer.description(of: record)
                if validateJSON {
                    let parsed = try? JSONSerialization.jsonObject(with: Data(description.json.utf8))
                    #expect(parsed != nil, "\(context): invalid JSON line \(description.json)")
                }
                _ = description.line
            } catch {
                failure = error
                #expect(error.recordIndex == count, "\(context): \(error)")
                #expect(error.offset >= 0 && error.offset <= bytes.count, "\(context): \(error)")
                break
            }
        }
        #expect(summary.frames == count, "\(context)")
        _ = summary.json
        return (count, failure)
    }

    @Test(arguments: AnalysisFixtures.names)
    func seededCorruptionsNeverTrap(_ name: String) {
        let (records, bytes) = Self.windows(name)
        let pcapng = name.hasSuffix(".pcapng")
        var random = SplitMix64(seed: 0xB1E_5EED ^ UInt64(bytes.count))
        var typedErrors = 0
        for trial in 0..<Self.corruptionsPerCapture {
            let k = records.isEmpty ? 0 : Int.random(in: 0..<records.count, using: &random)
            let window = Self.window(bytes, records, around: k, pcapng: pcapng)
            var mutated = window.bytes
            let mutation = Mutation.allCases.randomElement(using: &random) ?? .bitFlip
            let position = Int.random(in: 0..<max(1, mutated.count), using: &random)
            var flippedData = false
            switch mutation {
            case .bitFlip:
                mutated[position] ^= 1 << UInt8.random(in: 0..<8, using: &random)
                flippedData = !window.headerRanges.contains { $0.contains(position) }
            case .truncation:
                mutated.removeSubrange(position...)
            case .insertion:
                mutated.insert(UInt8.random(in: 0...255, using: &random), at: position)
            case .deletion:
                mutated.remove(at: position)
            case .lengthField:
                // Overwrite 4 bytes where a record header's included length (or any field) sits.
                let range = window.headerRanges.randomElement(using: &random) ?? 0..<0
                let at = min(range.lowerBound + 4, max(0, mutated.count - 4))
                for i in at..<min(at + 4, mutated.count) { mutated[i] = UInt8.random(in: 0...255, using: &random) }
            case .randomRun:
                for i in position..<min(position + 16, mutated.count) {
                    mutated[i] = UInt8.random(in: 0...255, using: &random)
                }
            }
            let context = "\(name) trial \(trial) \(mutation) at \(position)"
            let result = Self.decode(mutated, context: context, validateJSON: trial % 25 == 0)
            if result.error != nil { typedErrors += 1 }
            if flippedData {
                // A flipped bit inside packet data cannot change the framing of the capture.
                #expect(result.error == nil && result.records == window.recordCount, "\(context): \(result)")
            }
        }
        if !records.isEmpty {
            #expect(typedErrors > 0, "\(name): no corruption produced a typed error; the test is not biting")
        }
    }
}
