import BluewireCore
import Testing

@testable import BluewireATT

@Suite struct ATTListResponseTests {
    @Test func readByTypeResponseIteratesHandleValuePairs() throws {
        let bytes: [UInt8] = [0x09, 0x07, 0x02, 0x00, 0x02, 0x03, 0x00, 0x00, 0x2A, 0x04, 0x00, 0x02, 0x05, 0x00, 0x01, 0x2A]
        guard case .readByTypeResponse(let response) = try ATTPDU(decoding: bytes) else {
            Issue.record("not a Read By Type Response")
            return
        }
        let entries = Array(response.entries)
        #expect(entries.map(\.handle) == [0x0002, 0x0004])
        #expect(entries.map { Array($0.value) } == [[0x02, 0x03, 0x00, 0x00, 0x2A], [0x02, 0x05, 0x00, 0x01, 0x2A]])
        #expect(entries[1].value.startIndex == 11, "values must be slices of the PDU")
    }

    @Test func readByGroupTypeResponseIteratesServices() throws {
        let bytes: [UInt8] = [0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18, 0x06, 0x00, 0x09, 0x00, 0x01, 0x18]
        guard case .readByGroupTypeResponse(let response) = try ATTPDU(decoding: bytes) else {
            Issue.record("not a Read By Group Type Response")
            return
        }
        let entries = Array(response.entries)
        #expect(entries.count == 2)
        #expect(entries[0].handle == 1 && entries[0].endGroupHandle == 5 && Array(entries[0].value) == [0x00, 0x18])
        #expect(entries[1].handle == 6 && entries[1].endGroupHandle == 9 && Array(entries[1].value) == [0x01, 0x18])
    }

    @Test func findInformationResponseDecodesBothFormats() throws {
        guard case .findInformationResponse(let short) = try ATTPDU(decoding: [0x05, 0x01, 0x01, 0x00, 0x00, 0x28, 0x02, 0x00, 0x03, 0x28])
        else { Issue.record("format 1 not decoded"); return }
        #expect(short.format == .uuid16)
        #expect(Array(short.entries) == [.init(handle: 1, type: .primaryService), .init(handle: 2, type: .characteristic)])

        let long = Array(0x20...0x2F).map(UInt8.init)
        guard case .findInformationResponse(let wide) = try ATTPDU(decoding: [0x05, 0x02, 0x10, 0x00] + long)
        else { Issue.record("format 2 not decoded"); return }
        #expect(wide.format == .uuid128)
        #expect(Array(wide.entries) == [.init(handle: 0x10, type: BluetoothUUID(littleEndian: long[...])!)])
    }

    @Test func findByTypeValueResponseIteratesHandleRanges() throws {
        guard case .findByTypeValueResponse(let response) = try ATTPDU(decoding: [0x07, 0x01, 0x00, 0x05, 0x00, 0x06, 0x00, 0x09, 0x00])
        else { Issue.record("not decoded"); return }
        #expect(Array(response.entries) == [.init(foundAttributeHandle: 1, groupEndHandle: 5),
                                            .init(foundAttributeHandle: 6, groupEndHandle: 9)])
    }

    @Test func multipleHandleValueNotificationIteratesTuples() throws {
        guard case .multipleHandleValueNotification(let n) = try ATTPDU(
            decoding: [0x23, 0x03, 0x00, 0x01, 0x00, 0x64, 0x07, 0x00, 0x02, 0x00, 0x01, 0x02])
        else { Issue.record("not decoded"); return }
        let entries = Array(n.entries)
        #expect(entries.map(\.handle) == [3, 7])
        #expect(entries.map { Array($0.value) } == [[0x64], [0x01, 0x02]])
    }

    @Test func readMultipleVariableResponseMarksAValueCutByTheMTU() throws {
        guard case .readMultipleVariableResponse(let r) = try ATTPDU(decoding: [0x21, 0x01, 0x00, 0x0A, 0x05, 0x00, 0x01, 0x02])
        else { Issue.record("not decoded"); return }
        let entries = Array(r.entries)
        #expect(entries.count == 2)
        #expect(!entries[0].isTruncated && Array(entries[0].value) == [0x0A])
        #expect(entries[1].isTruncated && entries[1].valueLength == 5 && Array(entries[1].value) == [0x01, 0x02])
    }

    @Test func readByTypeBuilderTruncatesTheFirstValueAndStopsAtADifferentLength() {
        var response = ReadByTypeResponse()
        let appended0 = response.append(handle: 3, value: Array(repeating: 0xAB, count: 30)[...], mtu: 23)
        #expect(appended0)
        #expect(response.length == 21, "first value cut to ATT_MTU - 4 = 19 octets")
        let appended1 = response.append(handle: 5, value: [1, 2][...], mtu: 23)
        #expect(!appended1, "different length must end the list")
        var short = ReadByTypeResponse()
        let appended2 = short.append(handle: 3, value: [1, 2, 3, 4, 5][...], mtu: 23)
        #expect(appended2)
        let appended3 = short.append(handle: 5, value: [6, 7, 8, 9, 10][...], mtu: 23)
        #expect(appended3)
        let appended4 = short.append(handle: 7, value: [6, 7, 8, 9, 10][...], mtu: 23)
        #expect(appended4)
        let appended5 = short.append(handle: 9, value: [6, 7, 8, 9, 10][...], mtu: 23)
        #expect(!appended5, "2 + 4 × 7 = 30 > 23")
        let pdu = ATTPDU.readByTypeResponse(short).encode()
        #expect(pdu.count == 2 + 3 * 7 && pdu.count <= 23)
    }

    @Test func readByGroupTypeBuilderRespectsTheMTU() {
        var response = ReadByGroupTypeResponse()
        var added = 0
        while response.append(handle: UInt16(added * 4 + 1), endGroupHandle: UInt16(added * 4 + 4), value: [0x0D, 0x18][...], mtu: 23) {
            added += 1
        }
        #expect(added == 3, "2 + 3 × 6 = 20 ≤ 23 < 26")
        let decoded = try? ATTPDU(decoding: ATTPDU.readByGroupTypeResponse(response).encode())
        #expect(decoded == .readByGroupTypeResponse(response))
    }

    @Test func findInformationBuilderStopsWhenTheUUIDSizeChanges() {
        var response = FindInformationResponse()
        let appended6 = response.append(handle: 1, type: .primaryService, mtu: 23)
        #expect(appended6)
        let appended7 = response.append(handle: 2, type: BluetoothUUID(high: 1, low: 2), mtu: 23)
        #expect(!appended7)
        #expect(response.format == .uuid16 && Array(response.entries).count == 1)
    }

    @Test func readMultipleVariableBuilderCutsTheLastValueAtTheMTU() {
        var response = ReadMultipleVariableResponse()
        let first = response.append(value: Array(repeating: 1, count: 10)[...], mtu: 23)
        let second = response.append(value: Array(repeating: 2, count: 20)[...], mtu: 23)
        #expect(first && !second, "the second value must be cut and end the response")
        let pdu = ATTPDU.readMultipleVariableResponse(response).encode()
        #expect(pdu.count == 23)
        let entries = Array(response.entries)
        #expect(entries.count == 2 && entries[1].valueLength == 20 && entries[1].value.count == 8)
    }
}
