@testable import BluewireAnalysis
import BluewireCore
import BluewireGATT
import Testing

/// `analyze`'s GATT server table keeps its counter columns in line whatever the cells hold.
@Suite("Analyzed GATT table layout")
struct AnalyzeTableLayoutTests {
    @Test("a value with every property keeps the R W N I E columns under their headings")
    func longPropertyListStaysAligned() throws {
        var server = ObservedGATTServer(side: .peer)
        server.table.addService(handle: 0x0001, endHandle: 0x0005, uuid: BluetoothUUID(0x180D), isPrimary: true)
        server.table.addCharacteristic(.init(declarationHandle: 0x0002, properties: CharacteristicProperties(rawValue: 0xFF),
                                             valueHandle: 0x0003, uuid: BluetoothUUID(0x2A37)))
        server.table.addCharacteristic(.init(declarationHandle: 0x0004, properties: [.read],
                                             valueHandle: 0x0005, uuid: BluetoothUUID(0x2A38)))
        server.update(0x0003) { $0.notifications = 7 }
        server.update(0x0005) { $0.reads = 12 }
        let lines = server.text.split(separator: "\n").map(String.init)
        let heading = try #require(lines.first { $0.contains("last value") })
        let values = lines.filter { $0.contains("    Value") }
        #expect(values.count == 2)
        #expect(values[0].contains("broadcast,read,write_without_response,write,notify,indicate"), "\(values[0])")
        // Each counter ends where its heading letter ends: right-aligned numbers under R, W, N, I, E.
        for (letter, index) in [("R", 0), ("W", 1), ("N", 2), ("I", 3), ("E", 4)] {
            let headingEnd = column(of: " \(letter)", in: heading)
            for value in values {
                let end = nthNumberEnd(index, in: value)
                #expect(end == headingEnd, "\(letter) of \(value)  ends at \(end), heading at \(headingEnd)\n\(server.text)")
            }
        }
    }

    /// The column just past `token` in `line`.
    func column(of token: String, in line: String) -> Int {
        guard let range = line.range(of: token) else { return -1 }
        return line.distance(from: line.startIndex, to: range.upperBound)
    }

    /// The column just past the `n`th counter (0-based) of a value row: the counters are the
    /// right-aligned numbers after the properties cell.
    func nthNumberEnd(_ n: Int, in line: String) -> Int {
        let characters = Array(line)
        var found = -1, end = -1
        guard let valueRange = line.range(of: "Value") else { return -1 }
        var index = line.distance(from: line.startIndex, to: valueRange.upperBound)
        while index < characters.count, characters[index] == " " { index += 1 }
        while index < characters.count, characters[index] != " " { index += 1 }   // properties
        while index < characters.count, found < n {
            while index < characters.count, characters[index] == " " { index += 1 }
            while index < characters.count, characters[index] != " " { index += 1 }
            found += 1
            end = index
        }
        return end
    }
}
