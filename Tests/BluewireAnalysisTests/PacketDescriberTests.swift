import BluewireAnalysis
import BluewireCore
import BluewireSnoop
import Foundation
import Testing

@Suite struct PacketDescriberTests {
    static func record(_ index: Int, _ type: HCIPacketType, _ payload: [UInt8],
                       direction: PacketDirection = .controllerToHost, time: Int64 = 0) -> CaptureRecord {
        let packet = HCIPacket(type: type, payload: payload)
        return CaptureRecord(index: index, offset: 16, direction: direction, timestamp: time,
                             originalLength: UInt32(payload.count + 1), drops: 0, flags: 0,
                             data: [type.rawValue][...] + payload, content: .packet(packet))
    }

    /// An LE Advertising Report with one report: ADV_IND from a random address, RSSI -60, and AD
    /// structures for flags, a complete name holding a quote, a 16-bit UUID and manufacturer data.
    static let advertisingReport: [UInt8] = {
        let name = Array("Bob's \"Tag\"".utf8)
        let ad: [UInt8] = [0x02, 0x01, 0x06] + [UInt8(name.count + 1), 0x09] + name
            + [0x03, 0x03, 0x0F, 0x18] + [0x05, 0xFF, 0x4C, 0x00, 0xAB, 0xCD]
        let report: [UInt8] = [0x00, 0x01, 0x66, 0x55, 0x44, 0x33, 0x22, 0xC1, UInt8(ad.count)] + ad + [0xC4]
        let parameters: [UInt8] = [0x02, 0x01] + report
        return [0x3E, UInt8(parameters.count)] + parameters
    }()

    @Test func advertisingReportShowsAddressRSSINameUUIDsAndManufacturerData() throws {
        var describer = PacketDescriber()
        let d = describer.description(of: Self.record(0, .event, Self.advertisingReport))
        #expect(d.kind == "HCI Event")
        #expect(d.summary.contains("LE Advertising Report"))
        #expect(d.summary.contains("address=C1:22:33:44:55:66/random"))
        #expect(d.summary.contains("rssi=-60"))
        #expect(d.summary.contains(#"name="Bob's \"Tag\"""#))
        #expect(d.summary.contains("0x180F (Battery)"))
        #expect(d.summary.contains("manufacturer=0x004c:abcd"))
        #expect(d.error == nil, "\(String(describing: d.error))")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(d.json.utf8)) as? [String: Any])
        #expect(json["name"] as? String == "Bob's \"Tag\"")
        #expect(json["rssi"] as? Int == -60)
        #expect(json["direction"] as? String == "controller_to_host")
        #expect((json["uuids"] as? [String])?.first == "0x180F (Battery)")
    }

    @Test func commandShowsNameAndKeyParameters() {
        var describer = PacketDescriber()
        let line = describer.describe(Self.record(7, .command, [0x0C, 0x20, 0x02, 0x01, 0x00],
                                                  direction: .hostToController, time: 1_000_000))
        #expect(line.hasPrefix("#7 "))
        #expect(line.contains("0.000000 < HCI Command: LE Set Scan Enable (0x200c)"), "\(line)")
        #expect(line.contains("enable=yes") && line.contains("filter_duplicates=no"), "\(line)")
    }

    @Test func timeIsRelativeToTheFirstRecordAndMayGoBackwards() {
        var describer = PacketDescriber()
        let reset: [UInt8] = [0x03, 0x0C, 0x00]
        _ = describer.description(of: Self.record(0, .command, reset, time: 5_000_000))
        #expect(describer.description(of: Self.record(1, .command, reset, time: 6_250_000)).relativeTime == 1_250_000)
        let back = describer.description(of: Self.record(2, .command, reset, time: 4_999_977))
        #expect(back.relativeTime == -23)
        #expect(back.line.contains("-0.000023"), "\(back.line)")
    }

    @Test func eventShowsStatusAndCommand() {
        var describer = PacketDescriber()
        let line = describer.describe(Self.record(0, .event, [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x0C]))
        #expect(line.contains("> HCI Event: Command Complete (0x0e): Reset (0x0c03)"), "\(line)")
        #expect(line.contains("status=Command Disallowed (0x0c)"), "\(line)")
    }

    @Test func fragmentedNotificationIsShownWholeOnItsLastFragment() {
        var describer = PacketDescriber()
        // L2CAP length 7 on CID 4: Handle Value Notification, handle 0x002A, value 01 02 03 04.
        let first = describer.describe(Self.record(0, .acl, [0x40, 0x20, 0x05, 0x00, 0x07, 0x00, 0x04, 0x00, 0x1B]))
        #expect(first.contains("start of a fragmented L2CAP PDU of 11 bytes"), "\(first)")
        let last = describer.description(of: Self.record(1, .acl, [0x40, 0x10, 0x06, 0x00, 0x2A, 0x00, 1, 2, 3, 4]))
        #expect(last.summary.contains("ATT Handle Value Notification handle=0x002a value=01020304"), "\(last.summary)")
        #expect(last.fields.contains { $0.name == "reassembled_from" && $0.value == .integer(0) })
    }

    @Test func malformedPacketsAreDescribedWithTheirError() throws {
        var describer = PacketDescriber()
        // An LE Meta event whose Parameter_Total_Length claims more than is there.
        let d = describer.description(of: Self.record(0, .event, [0x3E, 0x13, 0x01]))
        let error = try #require(d.error)
        #expect(error.layer.asString == "hci")
        #expect(d.json.contains("\"error\":"))
        // A 1-byte ACL packet, an empty event, an empty command.
        for (type, payload) in [(HCIPacketType.acl, [UInt8(0x40)]), (.event, []), (.command, [0x03])] {
            #expect(describer.description(of: Self.record(1, type, payload)).error != nil)
        }
    }

    @Test(arguments: AnalysisFixtures.names)
    func everyRecordOfEveryCaptureGivesOneValidJSONLineWithUniqueKeys(_ name: String) throws {
        var describer = PacketDescriber()
        // The largest capture is checked on its first 5,000 records to keep the debug run short.
        let records = CaptureReader.readAll(AnalysisFixtures.bytes(name)).records.prefix(5_000)
        for record in records {
            let d = describer.description(of: record)
            let names = d.fields.map(\.name)
            #expect(Set(names).count == names.count, "\(name) #\(record.index): repeated keys \(names)")
            #expect(!d.json.contains("\n") && !d.line.contains("\n"), "\(name) #\(record.index)")
            let json = try JSONSerialization.jsonObject(with: Data(d.json.utf8)) as? [String: Any]
            #expect(json?["index"] as? Int == record.index, "\(name) #\(record.index): \(d.json)")
            #expect(d.line.hasPrefix("#\(record.index) "))
        }
    }
}
