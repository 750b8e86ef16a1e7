import Testing
import BluewireCore
@testable import BluewireHCI

@Suite struct AdvertisingReportTests {
    @Test func twoLegacyReportsInOneEventFromRealCapture() throws {
        let payload = eventPayload("043e21020200019c6a276a48480b02011a07ff4c0010020b00b804019c6a276a484800b8")
        guard case .leMeta(.advertisingReport(let event)) = try HCIEvent(decoding: payload) else {
            Issue.record("not an advertising report")
            return
        }
        #expect(event.numReports == 2 && event.validCount == 2 && event.error == nil)
        let reports = Array(event)
        #expect(reports.count == 2)
        #expect(reports[0].eventType == 0x00 && reports[0].isConnectable)
        #expect(reports[0].address.description == "48:48:6A:27:6A:9C/random")
        #expect(reports[0].rssi == -72)
        #expect(reports[0].advertisingData.manufacturerSpecificData?.companyIdentifier == 0x004C)
        #expect(reports[1].isScanResponse && reports[1].data.isEmpty)
    }

    @Test func reportDataIsASliceOfTheEventNotACopy() throws {
        let payload = eventPayload("043e2b02010000ab6fbf38c1a41f0d09475648353037325f36464142030388ec02010509ff88ec0002d0174200cf")
        guard case .leMeta(.advertisingReport(let event)) = try HCIEvent(decoding: payload) else { return }
        var iterator = event.makeIterator()
        let next = iterator.next()
        let report = try #require(next)
        let same = payload.withUnsafeBufferPointer { outer in
            report.data.withUnsafeBufferPointer { inner in
                inner.baseAddress == outer.baseAddress.map { $0 + 13 }
            }
        }
        #expect(same, "report data should point into the event buffer")
        #expect(report.advertisingData.localName == "GVH5072_6FAB")
    }

    @Test func overrunningSecondReportKeepsTheFirstAndReportsWhere() throws {
        // Two reports declared; the second's Data_Length (0x09) runs past the event.
        let payload = eventPayload("043e19 02 02 00 01 9c6a276a4848 03 020106 b8 04 01 9c6a276a4848 09 01")
        guard case .leMeta(.advertisingReport(let event)) = try HCIEvent(decoding: payload) else {
            Issue.record("decoding should keep the first report")
            return
        }
        #expect(event.validCount == 1)
        #expect(Array(event).count == 1)
        #expect(event.error == DecodeError(.truncated(needed: 9, available: 1), layer: "hci", field: "Data", offset: 26))
    }

    @Test func extendedReportFromAndroidCapture() throws {
        let payload = eventPayload("043e300d01130001200004eeddcc0100ff7fb00000000000000000001602010612094341535349412d424541434f4e2d343332")
        guard case .leMeta(.extendedAdvertisingReport(let event)) = try HCIEvent(decoding: payload) else {
            Issue.record("not an extended report")
            return
        }
        let report = try #require(Array(event).first)
        #expect(report.isLegacy && report.isConnectable && report.eventType.contains(.scannable))
        #expect(report.dataStatus == .complete)
        #expect(report.address == BluetoothAddress(0xCC, 0xDD, 0xEE, 0x04, 0x00, 0x20, type: .random))
        #expect(report.primaryPHY == 1 && report.secondaryPHY == 0 && report.advertisingSID == 0xFF)
        #expect(report.txPower == 127 && report.rssi == -80)
        #expect(report.advertisingData.localName == "CASSIA-BEACON-432")
        #expect(report.advertisingData.flags == [.leGeneralDiscoverableMode, .brEdrNotSupported])
    }

    @Test func extendedReportWithOverrunningADKeepsReportButFlagsAD() throws {
        // Android capture: AD Length 0x0c inside 6 octets of data.
        let payload = eventPayload("043e200d010000007635e2e01bcc0100ff7fc5000000000000000000060c002beeddcc")
        guard case .leMeta(.extendedAdvertisingReport(let event)) = try HCIEvent(decoding: payload) else { return }
        let report = try #require(Array(event).first)
        #expect(!report.isLegacy && !report.isConnectable)
        #expect(Array(report.advertisingData).isEmpty)
        #expect(report.advertisingData.error == DecodeError(.truncated(needed: 12, available: 5), layer: "hci", field: "AD_Length", offset: 0))
    }

    @Test func bumbleStyleExtendedScanResponseAndMoreToComeStatus() throws {
        let payload = eventPayload("043e1e 0d 01 2800 01 060504030201 01 00 ff 7f ce 0000 00 000000000000 04 03090041")
        guard case .leMeta(.extendedAdvertisingReport(let event)) = try HCIEvent(decoding: payload) else { return }
        let r = try #require(Array(event).first)
        #expect(r.isScanResponse && r.dataStatus == .incompleteMoreToCome)
        #expect(LEExtendedAdvertisingReport.EventType(rawValue: 0x40).dataStatus == .incompleteTruncated)
    }

    @Test func directedReport() throws {
        let payload = eventPayload("043e12 0b 01 01 01 060504030201 01 0c0b0a090807 c4")
        guard case .leMeta(.directedAdvertisingReport(let event)) = try HCIEvent(decoding: payload) else { return }
        let r = try #require(Array(event).first)
        #expect(r.directAddress == BluetoothAddress(7, 8, 9, 0x0A, 0x0B, 0x0C, type: .random) && r.rssi == -60)
    }
}
