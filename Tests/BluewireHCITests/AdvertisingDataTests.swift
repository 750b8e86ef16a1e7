import Testing
import BluewireCore
@testable import BluewireHCI

@Suite struct AdvertisingDataTests {
    // Govee thermometer advertisement from a real capture.
    let govee = bytes("0d09475648353037325f36464142 030388ec 020105 09ff88ec0002d0174200")

    @Test func parsesEveryStructureOfARealAdvertisement() {
        let ad = AdvertisingData(govee)
        #expect(Array(ad).map(\.type) == [.completeLocalName, .completeList16BitServiceUUIDs, .flags, .manufacturerSpecificData])
        #expect(ad.localName == "GVH5072_6FAB" && ad.hasCompleteLocalName)
        #expect(ad.serviceUUIDs == [BluetoothUUID(0xEC88)])
        #expect(ad.containsServiceUUID(BluetoothUUID(0xEC88)))
        #expect(ad.flags == [.leLimitedDiscoverableMode, .brEdrNotSupported])
        let m = ad.manufacturerSpecificData
        #expect(m?.companyIdentifier == 0xEC88)
        #expect(m.map { Array($0.data) } == bytes("0002d0174200"))
        #expect(ad.error == nil)
    }

    @Test func typedValuesForOtherTypes() {
        let ad = AdvertisingData(bytes(
            "020ac4 031980 00 05120600 0c00 04160f1864 0416aabbcc 0b24172f2f6578616d706c65 021c02"
                + " 050478563412 0320fefd 1107fb349b5f80000080001000000f180000"))
        #expect(ad.txPowerLevel == -60)
        #expect(ad.appearance == 0x0080)
        #expect(ad.peripheralConnectionIntervalRange.map { [$0.min, $0.max] } == [6, 12])
        #expect(ad.leRole == 2)
        #expect(ad.uri.map(Array.init) == bytes("172f2f6578616d706c65"))
        let sd = ad.serviceData
        #expect(sd.count == 2)
        #expect(sd.first?.uuid == BluetoothUUID(0x180F) && sd.first.map { Array($0.data) } == [0x64])
        #expect(sd.last?.uuid == BluetoothUUID(0xBBAA) && sd.last.map { Array($0.data) } == [0xCC])
        #expect(ad.serviceUUIDs == [BluetoothUUID(uint32: 0x1234_5678), BluetoothUUID(0x180F)])
        #expect(Array(ad).contains { $0.value == .malformed(.serviceData32BitUUID, [0xFE, 0xFD][...]) })
        #expect(ad.error == nil)
    }

    @Test func zeroLengthEndsSignificantDataWithoutError() {
        let ad = AdvertisingData(bytes("020106 00 ffffffff"))
        #expect(Array(ad).count == 1)
        #expect(ad.error == nil)
    }

    @Test func overrunIsReportedAfterTheGoodStructures() {
        let ad = AdvertisingData(bytes("020106 0509414243"))
        #expect(Array(ad).map(\.type) == [.flags])
        #expect(ad.error == DecodeError(.truncated(needed: 5, available: 4), layer: "hci", field: "AD_Length", offset: 3))
    }

    @Test func knownTypeWithWrongSizeIsMalformedNotATrap() {
        let ad = AdvertisingData(bytes("0219ff 0103 020301"))
        let values = Array(ad).map(\.value)
        #expect(values.count == 3)
        #expect(values[0] == .malformed(.appearance, [0xFF][...]))
        #expect(values[1] == .serviceUUIDs(ADUUIDList(width: 2, bytes: [][...]), complete: true))
        #expect(values[2] == .malformed(.completeList16BitServiceUUIDs, [0x01][...]))
    }
}

@Suite struct AdvertisingDataBuilderTests {
    @Test func encodedDataParsesBackToTheSameValues() throws {
        let custom = BluetoothUUID(parsing: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")!
        let data = try AdvertisingDataBuilder.encode([
            .flags([.leGeneralDiscoverableMode, .brEdrNotSupported]),
            .serviceUUIDs([BluetoothUUID(0x180D)], complete: true),
            .completeLocalName("Bluewire"),
            .txPowerLevel(-8),
        ])
        #expect(data == bytes("020106 03030d18 0909426c756577697265 020af8"))
        let ad = AdvertisingData(data)
        #expect(ad.localName == "Bluewire" && ad.txPowerLevel == -8)
        let big = try AdvertisingDataBuilder.encode([.serviceUUIDs([custom, BluetoothUUID(0x180F)], complete: false)])
        #expect(AdvertisingData(big).serviceUUIDs == [BluetoothUUID(0x180F), custom])
        let sd = try AdvertisingDataBuilder.encode([.serviceData(uuid: BluetoothUUID(uint32: 0xAABBCCDD), data: [1])])
        #expect(sd == bytes("0620ddccbbaa01"))
    }

    @Test func elementThatDoesNotFitIsRefusedWholeWithSizes() throws {
        var builder = AdvertisingDataBuilder()
        try builder.append(.flags([.leGeneralDiscoverableMode]))
        try builder.append(.manufacturerSpecificData(companyIdentifier: 0xFFFF, data: Array(repeating: 0, count: 20)))
        #expect(builder.remaining == 31 - 3 - 24)
        #expect(throws: AdvertisingDataError.doesNotFit(type: .completeLocalName, needed: 10, available: 4)) {
            try builder.append(.completeLocalName("Bluewire"))
        }
        #expect(builder.bytes.count == 27)
    }

    @Test func extendedLimitAllowsLongerDataButNotOver254PerStructure() throws {
        var builder = AdvertisingDataBuilder(maxLength: AdvertisingDataBuilder.extendedMaxLength)
        try builder.append(.raw(type: ADType(0x30), data: Array(repeating: 0x41, count: 200)))
        #expect(builder.bytes.count == 202)
        #expect(throws: AdvertisingDataError.structureTooLong(type: .manufacturerSpecificData, dataLength: 257)) {
            try builder.append(.manufacturerSpecificData(companyIdentifier: 1, data: Array(repeating: 0, count: 255)))
        }
    }
}
