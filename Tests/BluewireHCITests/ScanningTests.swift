import Testing
import BluewireCore
@testable import BluewireHCI

func info(extended: Bool) -> ControllerInfo {
    var octets = [UInt8](repeating: 0, count: 64)
    octets[26] = 0x0C  // LE Set Scan Parameters, LE Set Scan Enable
    if extended { octets[36] = 0xFF; octets[37] = 0xE0 }
    return ControllerInfo(
        version: LocalVersionInformation(hciVersion: 9, hciSubversion: 0, lmpVersion: 9, companyIdentifier: 0xFFFF, lmpSubversion: 0),
        supportedCommands: LocalSupportedCommands(octets: octets),
        leFeatures: extended ? [.leExtendedAdvertising, .le2MPHY] : [.le2MPHY],
        leACLDataPacketLength: 27, totalNumLEACLDataPackets: 8, randomAddress: .randomStatic(1))
}

func extendedReport(
    _ eventType: UInt16, address: BluetoothAddress = BluetoothAddress(1, 2, 3, 4, 5, 6, type: .random), sid: UInt8 = 1,
    rssi: Int8 = -50, data: [UInt8]
) -> LEExtendedAdvertisingReport {
    LEExtendedAdvertisingReport(eventType: .init(rawValue: eventType), address: address, advertisingSID: sid, rssi: rssi, data: data[...])
}

@Suite struct ScanCommandsTests {
    @Test func legacyControllerGetsLegacyScanCommands() {
        let commands = ScanCommands.start(ScanParameters(active: true, interval: 0x60, window: 0x30), on: info(extended: false))
        #expect(commands == [
            .leSetScanParameters(LESetScanParameters(active: true, scanInterval: 0x60, scanWindow: 0x30, ownAddressType: 1)),
            .leSetScanEnable(LESetScanEnable(enable: true, filterDuplicates: false)),
        ])
        #expect(ScanCommands.stop(on: info(extended: false)) == .leSetScanEnable(LESetScanEnable(enable: false)))
    }

    @Test func extendedControllerGetsExtendedScanCommandsOn1M() {
        let commands = ScanCommands.start(ScanParameters(active: false, filterDuplicates: true), on: info(extended: true))
        guard case .leSetExtendedScanParameters(let p)? = commands.first else {
            Issue.record("expected extended parameters, got \(commands)")
            return
        }
        #expect(p.scanningPHYs == .le1M && p.le1M?.scanType == 0 && p.ownAddressType == 1)
        #expect(commands.last == .leSetExtendedScanEnable(LESetExtendedScanEnable(enable: true, filterDuplicates: 1)))
        #expect(ScanCommands.stop(on: info(extended: true)) == .leSetExtendedScanEnable(LESetExtendedScanEnable(enable: false)))
    }

    @Test func windowNeverExceedsInterval() {
        #expect(ScanParameters(interval: 0x10, window: 0x40).window == 0x10)
    }
}

@Suite struct ExtendedAdvertisingReassemblerTests {
    @Test func completeReportPassesThroughUncopied() {
        var r = ExtendedAdvertisingReassembler()
        let report = extendedReport(0x0013, data: [2, 1, 6])
        #expect(r.add(report) == .init(report: report, isTruncated: false))
        #expect(r.pendingCount == 0)
    }

    @Test func chainedFragmentsJoinInOrder() {
        var r = ExtendedAdvertisingReassembler()
        #expect(r.add(extendedReport(0x0020, data: [1, 2])) == nil)
        #expect(r.add(extendedReport(0x0020, data: [3])) == nil)
        #expect(r.pendingCount == 1)
        let whole = r.add(extendedReport(0x0000, rssi: -40, data: [4, 5]))
        #expect(whole.map { Array($0.report.data) } == [1, 2, 3, 4, 5])
        #expect(whole?.isTruncated == false && whole?.report.rssi == -40)
        #expect(r.pendingCount == 0)
    }

    @Test func chainsOfDifferentSetsDoNotMix() {
        var r = ExtendedAdvertisingReassembler()
        let other = BluetoothAddress(9, 9, 9, 9, 9, 9, type: .random)
        _ = r.add(extendedReport(0x0020, sid: 1, data: [0xA]))
        _ = r.add(extendedReport(0x0020, sid: 2, data: [0xB]))
        _ = r.add(extendedReport(0x0020, address: other, sid: 1, data: [0xC]))
        #expect(r.add(extendedReport(0x0000, sid: 2, data: [0xB2])).map { Array($0.report.data) } == [0xB, 0xB2])
        #expect(r.add(extendedReport(0x0000, address: other, sid: 1, data: [0xC2])).map { Array($0.report.data) } == [0xC, 0xC2])
        #expect(r.add(extendedReport(0x0000, sid: 1, data: [0xA2])).map { Array($0.report.data) } == [0xA, 0xA2])
    }

    @Test func truncatedChainIsEmittedAndMarked() {
        var r = ExtendedAdvertisingReassembler()
        _ = r.add(extendedReport(0x0020, data: [1]))
        let out = r.add(extendedReport(0x0040, data: [2]))
        #expect(out?.isTruncated == true && out.map { Array($0.report.data) } == [1, 2])
        #expect(r.add(extendedReport(0x0040, data: [7]))?.isTruncated == true, "a lone truncated report is marked too")
    }

    @Test func chainLongerThan1650OctetsIsCappedAndMarked() {
        var r = ExtendedAdvertisingReassembler()
        for _ in 0..<7 { _ = r.add(extendedReport(0x0020, data: Array(repeating: 0xEE, count: 251))) }
        let out = r.add(extendedReport(0x0000, data: Array(repeating: 0xEE, count: 251)))
        #expect(out?.report.data.count == 1650)
        #expect(out?.isTruncated == true)
    }

    @Test func oldestChainIsDroppedWhenTooManyArePending() {
        var r = ExtendedAdvertisingReassembler(maxPendingChains: 2)
        _ = r.add(extendedReport(0x0020, sid: 1, data: [1]))
        _ = r.add(extendedReport(0x0020, sid: 2, data: [2]))
        _ = r.add(extendedReport(0x0020, sid: 3, data: [3]))
        #expect(r.pendingCount == 2)
        // sid 1 was evicted: its last fragment now stands alone.
        #expect(r.add(extendedReport(0x0000, sid: 1, data: [9])).map { Array($0.report.data) } == [9])
    }
}

@Suite struct AdvertisingAggregatorTests {
    let data = bytes("020106 0509426c7565 03030d18 05ff4c000102")

    @Test func bumbleDoubleReportMergesIntoOneDevice() {
        var aggregator = AdvertisingAggregator()
        let first = aggregator.add(extendedReport(0x0001, data: data), now: .zero)
        let second = aggregator.add(extendedReport(0x0008, rssi: -51, data: data), now: MonotonicInstant(microseconds: 10))
        #expect(first != nil)
        #expect(second == nil, "the scan-response copy changes nothing but RSSI")
        let device = aggregator.devices[BluetoothAddress(1, 2, 3, 4, 5, 6, type: .random)]
        #expect(device?.rssi == -51)
        #expect(device?.connectable == true, "a scan response does not clear connectable")
        #expect(device?.scanResponse == data)
        #expect(first?.name == "Blue")
        #expect(first?.serviceUUIDs == [BluetoothUUID(0x180D)])
        #expect(first?.manufacturerData == [.init(companyIdentifier: 0x004C, data: [1, 2])])
        #expect(first?.addressType == .random)
    }

    @Test func legacyAdvertisementAndScanResponseCombine() {
        var aggregator = AdvertisingAggregator()
        let address = BluetoothAddress(0xAA, 0, 0, 0, 0, 1)
        let adv = LEAdvertisingReport(eventType: 0x00, address: address, data: bytes("020106 020a04")[...], rssi: -70)
        let rsp = LEAdvertisingReport(eventType: 0x04, address: address, data: bytes("0509 4e616d65 03190002")[...], rssi: -68)
        #expect(aggregator.add(adv, now: .zero)?.name == nil)
        let merged = aggregator.add(rsp, now: .zero)
        #expect(merged?.name == "Name" && merged?.txPower == 4 && merged?.appearance == 0x0200)
        #expect(merged?.advertisingData == bytes("020106 020a04") && merged?.scanResponse == bytes("05094e616d6503190002"))
        #expect(aggregator.add(adv, now: .zero) == nil, "a repeat is collapsed")
    }

    @Test func changedManufacturerDataIsEmittedAgain() {
        var aggregator = AdvertisingAggregator()
        _ = aggregator.add(extendedReport(0x0001, data: bytes("05ff4c000101")), now: .zero)
        let changed = aggregator.add(extendedReport(0x0001, data: bytes("05ff4c000102")), now: .zero)
        #expect(changed?.manufacturerData.first?.data == [1, 2])
    }

    /// Names are compared as octets: "é" as one code point (C3 A9) and as "e" + combining acute
    /// (65 CC 81) are equal Swift strings but different advertisements, so the second is emitted.
    @Test func nameWithOtherOctetsIsEmittedAgainEvenWhenCanonicallyEqual() {
        var aggregator = AdvertisingAggregator()
        let first = aggregator.add(extendedReport(0x0001, data: bytes("0309c3a9")), now: .zero)
        let same = aggregator.add(extendedReport(0x0001, data: bytes("0309c3a9")), now: .zero)
        let decomposed = aggregator.add(extendedReport(0x0001, data: bytes("040965cc81")), now: .zero)
        #expect(first?.name == "\u{E9}")
        #expect(same == nil)
        #expect(decomposed.map { Array($0.name?.utf8 ?? "".utf8) } == [0x65, 0xCC, 0x81])
    }

    @Test func sameAddressBitsWithDifferentTypesAreDifferentDevices() {
        var aggregator = AdvertisingAggregator()
        _ = aggregator.add(extendedReport(0x0001, address: BluetoothAddress(value: 5, type: .public), data: data), now: .zero)
        _ = aggregator.add(extendedReport(0x0001, address: BluetoothAddress(value: 5, type: .random), data: data), now: .zero)
        #expect(aggregator.devices.count == 2)
    }

    @Test func serviceUUIDFilterWaitsForMatchingData() {
        var aggregator = AdvertisingAggregator(filter: AdvertisingFilter(serviceUUIDs: [BluetoothUUID(0x180F)]))
        #expect(aggregator.add(extendedReport(0x0001, data: data), now: .zero) == nil)
        let battery = aggregator.add(extendedReport(0x0008, data: bytes("03030f18")), now: .zero)
        #expect(battery?.serviceUUIDs == [BluetoothUUID(0x180D), BluetoothUUID(0x180F)])
    }

    @Test func namePrefixFilterMatchesNameFromScanResponse() {
        var aggregator = AdvertisingAggregator(filter: AdvertisingFilter(namePrefix: "Heart"))
        #expect(aggregator.add(extendedReport(0x0001, data: bytes("020106")), now: .zero) == nil)
        #expect(aggregator.add(extendedReport(0x0008, data: bytes("0609 4865617274")), now: .zero)?.name == "Heart")
        #expect(aggregator.add(extendedReport(0x0001, address: BluetoothAddress(value: 7), data: bytes("0609 4865617200")), now: .zero) == nil)
    }

    @Test func addressFilterKeepsOnlyListedDevices() {
        let wanted = BluetoothAddress(1, 2, 3, 4, 5, 6, type: .random)
        var aggregator = AdvertisingAggregator(filter: AdvertisingFilter(addresses: [wanted]))
        #expect(aggregator.add(extendedReport(0x0001, address: BluetoothAddress(value: 99, type: .random), data: data), now: .zero) == nil)
        #expect(aggregator.add(extendedReport(0x0001, data: data), now: .zero)?.address == wanted)
        #expect(AdvertisingFilter(addresses: [BluetoothAddress(1, 2, 3, 4, 5, 6)]).matches(DiscoveredDevice(address: wanted, rssi: 0)),
            "an address typed without /random matches either type")
    }

    @Test func extendedReportTxPowerIsUsedWhenNoADStructureGivesOne() {
        var aggregator = AdvertisingAggregator()
        var report = extendedReport(0x0001, data: bytes("020106"))
        report.txPower = -12
        #expect(aggregator.add(report, now: .zero)?.txPower == -12)
    }
}
