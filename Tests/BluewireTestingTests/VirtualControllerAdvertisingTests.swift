import BluewireCore
import BluewireHCI
import BluewireTesting
import Testing

/// A link with a scanner ("central") and an advertiser ("peripheral"), both brought up with random addresses.
struct AdvertisingScene {
    let link: VirtualLink
    let central: VirtualController
    let peripheral: VirtualController

    typealias Configure = (inout VirtualController.Configuration) -> Void

    init(
        timing: VirtualLink.Timing = .immediate, leEventMask: UInt64 = leMaskLegacyConnection,
        central configureCentral: Configure = { _ in }, peripheral configurePeripheral: Configure = { _ in }
    ) {
        link = VirtualLink(timing: timing)
        var centralConfig = VirtualController.Configuration(publicAddress: VirtualAddress.centralPublic)
        configureCentral(&centralConfig)
        var peripheralConfig = VirtualController.Configuration(publicAddress: VirtualAddress.peripheralPublic)
        configurePeripheral(&peripheralConfig)
        central = link.addController(centralConfig)
        peripheral = link.addController(peripheralConfig)
        bringUpController(central, random: VirtualAddress.centralRandom, leEventMask: leEventMask)
        bringUpController(peripheral, random: VirtualAddress.peripheralRandom, leEventMask: leEventMask)
    }

    /// Flags + Complete Local Name "Virt".
    static let advertisingData = hexBytes("02 01 06 05 09 56 69 72 74")
    /// Complete list of 16-bit service UUIDs: Battery (0x180F).
    static let scanResponseData = hexBytes("03 03 0f 18")

    /// Legacy advertising of the given type every 100 ms from the peripheral's random address.
    func advertiseLegacy(type: UInt8 = 0x00, peer: BluetoothAddress = BluetoothAddress(value: 0)) {
        expectCommandComplete(peripheral, .leSetAdvertisingParameters(
            LESetAdvertisingParameters(advertisingType: type, ownAddressType: 0x01, peerAddress: peer)))
        expectCommandComplete(peripheral, .leSetAdvertisingData(LESetAdvertisingData(advertisingData: Self.advertisingData)))
        expectCommandComplete(peripheral, .leSetScanResponseData(LESetScanResponseData(scanResponseData: Self.scanResponseData)))
        expectCommandComplete(peripheral, .leSetAdvertisingEnable(LESetAdvertisingEnable(enable: true)))
    }

    /// Legacy scanning by the central; returns the reports delivered at once (Command Complete removed).
    func scanLegacy(active: Bool, filterDuplicates: Bool = false) -> [String] {
        expectCommandComplete(central, .leSetScanParameters(LESetScanParameters(active: active, ownAddressType: 0x01)))
        return Array(hexLines(expectCommandComplete(central, .leSetScanEnable(LESetScanEnable(enable: true, filterDuplicates: filterDuplicates)))).dropFirst())
    }

    func scanExtended(active: Bool, filterDuplicates: UInt8 = 0, duration: UInt16 = 0) -> [String] {
        expectCommandComplete(central, .leSetExtendedScanParameters(LESetExtendedScanParameters(
            ownAddressType: 0x01, le1M: .init(active: active))))
        return Array(hexLines(expectCommandComplete(central, .leSetExtendedScanEnable(LESetExtendedScanEnable(
            enable: true, filterDuplicates: filterDuplicates, duration: duration)))).dropFirst())
    }

    /// An extended advertising set 0 of the peripheral with its own random address, then enabled.
    func advertiseExtended(
        properties: LESetExtendedAdvertisingParameters.EventProperties, data: [UInt8] = [], scanResponse: [UInt8] = [],
        sid: UInt8 = 3, maxEvents: UInt8 = 0, notifyScanRequests: Bool = false
    ) {
        let selected = expectCommandComplete(peripheral, .leSetExtendedAdvertisingParameters(LESetExtendedAdvertisingParameters(
            eventProperties: properties, secondaryAdvertisingPHY: 0x02, advertisingSID: sid,
            scanRequestNotificationEnable: notifyScanRequests)))
        #expect(hexLines(selected) == ["04 0e 05 01 36 20 00 00"], "0x7F (no preference) selects 0 dBm")
        expectCommandComplete(peripheral, .raw(opcode: .leSetAdvertisingSetRandomAddress,
                                       parameters: ([0x00] + VirtualAddress.peripheralRandom.littleEndianBytes)[...]))
        for (command, payload) in [(true, data), (false, scanResponse)] where !payload.isEmpty {
            // Fragments of at most 251 octets: First, Intermediate…, Last (or Complete).
            var fragments: [ArraySlice<UInt8>] = []
            var start = 0
            while start < payload.count {
                fragments.append(payload[start..<min(start + 251, payload.count)])
                start += 251
            }
            for (index, fragment) in fragments.enumerated() {
                let operation: UInt8 = fragments.count == 1 ? 0x03 : index == 0 ? 0x01 : index == fragments.count - 1 ? 0x02 : 0x00
                let piece = ExtendedAdvertisingDataFragment(operation: operation, data: fragment)
                expectCommandComplete(peripheral, command
                    ? .leSetExtendedAdvertisingData(LESetExtendedAdvertisingData(piece))
                    : .leSetExtendedScanResponseData(LESetExtendedScanResponseData(piece)))
            }
        }
        expectCommandComplete(peripheral, .leSetExtendedAdvertisingEnable(LESetExtendedAdvertisingEnable(
            enable: true, sets: [.init(advertisingHandle: 0, maxExtendedAdvertisingEvents: maxEvents)])))
    }
}

/// The peripheral's random address C2:00:00:00:00:02 in wire order.
let peripheralRandomWire = "02 00 00 00 00 c2"
let centralRandomWire = "01 00 00 00 00 c1"

let legacyADVIND = "04 3e 15 02 01 00 01 \(peripheralRandomWire) 09 02 01 06 05 09 56 69 72 74 ce"
let legacySCANRSP = "04 3e 10 02 01 04 01 \(peripheralRandomWire) 04 03 03 0f 18 ce"
let extendedADVIND =
    "04 3e 23 0d 01 13 00 01 \(peripheralRandomWire) 01 00 ff 7f ce 00 00 00 00 00 00 00 00 00 09 02 01 06 05 09 56 69 72 74"
let extendedSCANRSP = "04 3e 1e 0d 01 1b 00 01 \(peripheralRandomWire) 01 00 ff 7f ce 00 00 00 00 00 00 00 00 00 04 03 03 0f 18"

@Suite("VirtualController advertising and scanning")
struct VirtualControllerAdvertisingTests {
    @Test("a passive legacy scanner sees ADV_IND as an LE Advertising Report (0x02) and no scan response")
    func passiveLegacyScan() {
        let scene = AdvertisingScene()
        scene.advertiseLegacy()
        #expect(scene.scanLegacy(active: false) == [legacyADVIND])
    }

    @Test("an active legacy scanner gets the advertisement and then the scan response (event type 4)")
    func activeLegacyScan() {
        let scene = AdvertisingScene()
        #expect(scene.scanLegacy(active: true).isEmpty, "nobody advertises yet")
        scene.advertiseLegacy()
        #expect(hexLines(scene.central.takeOutput()) == [legacyADVIND, legacySCANRSP], "reports arrive when advertising starts")
    }

    @Test("non-connectable and scannable-undirected advertising report their own event types")
    func legacyEventTypes() {
        let scene = AdvertisingScene()
        scene.advertiseLegacy(type: 0x03)
        let nonConnectable = scene.scanLegacy(active: true)
        // ADV_NONCONN_IND (3) is not scannable: no scan response.
        #expect(nonConnectable == [legacyADVIND.replacing("02 01 00 01", with: "02 01 03 01")])
        expectCommandComplete(scene.peripheral, .leSetAdvertisingEnable(LESetAdvertisingEnable(enable: false)))
        scene.advertiseLegacy(type: 0x02)
        #expect(hexLines(scene.central.takeOutput())
            == [legacyADVIND.replacing("02 01 00 01", with: "02 01 02 01"), legacySCANRSP])
    }

    @Test("advertising repeats every interval: reports repeat without the duplicate filter and not with it")
    func duplicateFilter() {
        let unfiltered = AdvertisingScene()
        unfiltered.advertiseLegacy()
        #expect(unfiltered.scanLegacy(active: true, filterDuplicates: false).count == 2)
        unfiltered.link.clock.advance(by: .seconds(1))
        // Advertising started at 0 with a 100 ms interval: events at 100 … 1000 ms.
        #expect(unfiltered.central.takeOutput().count == 20)

        let filtered = AdvertisingScene()
        filtered.advertiseLegacy()
        #expect(filtered.scanLegacy(active: true, filterDuplicates: true) == [legacyADVIND, legacySCANRSP])
        filtered.link.clock.advance(by: .seconds(1))
        #expect(filtered.central.takeOutput().isEmpty)
        // Re-enabling scanning resets the filter.
        expectCommandComplete(filtered.central, .leSetScanEnable(LESetScanEnable(enable: false)))
        #expect(hexLines(expectCommandComplete(filtered.central, .leSetScanEnable(LESetScanEnable(enable: true, filterDuplicates: true)))).count == 3)
    }

    @Test("an extended scanner reports legacy advertising as Extended Advertising Reports (0x0D) with legacy event types")
    func extendedScanOfLegacyAdvertising() {
        let scene = AdvertisingScene()
        scene.advertiseLegacy()
        #expect(scene.scanExtended(active: true) == [extendedADVIND, extendedSCANRSP])
    }

    @Test("a legacy scanner cannot see extended advertising PDUs, an extended scanner can")
    func legacyScannerIgnoresExtendedPDUs() {
        let scene = AdvertisingScene()
        scene.advertiseExtended(properties: [], data: AdvertisingScene.advertisingData)
        #expect(scene.scanLegacy(active: true).isEmpty)
        expectCommandComplete(scene.central, .reset)
        bringUpController(scene.central, random: VirtualAddress.centralRandom)
        let reports = scene.scanExtended(active: true)
        // Event type 0x0000: non-connectable, non-scannable, complete; primary 1M, secondary 2M, SID 3.
        #expect(reports == ["04 3e 23 0d 01 00 00 01 \(peripheralRandomWire) 01 02 03 7f ce 00 00 00 00 00 00 00 00 00 09 02 01 06 05 09 56 69 72 74"])
    }

    @Test("extended data too long for one event is split into reports with Data_Status 'more to come'")
    func longExtendedDataIsFragmented() throws {
        let scene = AdvertisingScene()
        let data = (0..<500).map { UInt8(truncatingIfNeeded: $0) }
        scene.advertiseExtended(properties: [], data: data)
        let reports = scene.scanExtended(active: false).map(hexBytes)
        try #require(reports.count == 3)
        // Event_Type is at offset 5 (H4, code, length, subevent, Num_Reports); Data_Length at offset 28.
        #expect(reports.map { $0[5] } == [0x20, 0x20, 0x00])
        #expect(reports.map { Int($0[28]) } == [229, 229, 42])
        #expect(reports.map { $0.count } == [258, 258, 71], "a full event carries 255 parameter octets")
        #expect(Array(reports.map { $0.dropFirst(29) }.joined()) == data, "fragments reassemble to the advertised data")
        expectDecodable(reports.map { HCIPacket(type: .event, payload: Array($0.dropFirst())) })
    }

    @Test("scannable extended advertising: an empty advertisement report, then the scan response (0x000A)")
    func scannableExtendedAdvertising() {
        let scene = AdvertisingScene()
        scene.advertiseExtended(properties: [.scannable], scanResponse: AdvertisingScene.scanResponseData, notifyScanRequests: true)
        let reports = scene.scanExtended(active: true)
        #expect(reports == [
            "04 3e 1a 0d 01 02 00 01 \(peripheralRandomWire) 01 02 03 7f ce 00 00 00 00 00 00 00 00 00 00",
            "04 3e 1e 0d 01 0a 00 01 \(peripheralRandomWire) 01 02 03 7f ce 00 00 00 00 00 00 00 00 00 04 03 03 0f 18",
        ])
        // The advertiser asked to hear about scan requests: LE Scan Request Received (0x13).
        #expect(hexLines(scene.peripheral.takeOutput()) == ["04 3e 09 13 00 01 \(centralRandomWire)"])
    }

    @Test("directed advertising is reported only to the device it is directed at")
    func directedAdvertising() {
        let scene = AdvertisingScene()
        let bystander = scene.link.addController(publicAddress: VirtualAddress.thirdPublic)
        bringUpController(bystander, random: VirtualAddress.thirdRandom)
        expectCommandComplete(bystander, .leSetScanParameters(LESetScanParameters(active: true, ownAddressType: 0x01)))
        expectCommandComplete(bystander, .leSetScanEnable(LESetScanEnable(enable: true)))
        // ADV_DIRECT_IND, low duty cycle, to the central's random address.
        scene.advertiseLegacy(type: 0x04, peer: VirtualAddress.centralRandom)
        #expect(scene.scanLegacy(active: true) == ["04 3e 0c 02 01 01 01 \(peripheralRandomWire) 00 ce"])
        #expect(bystander.takeOutput().isEmpty)
    }

    @Test("the advertising report is masked without LE Meta in the event mask or without its LE mask bit")
    func reportsHonourMasks() {
        let scene = AdvertisingScene(leEventMask: leMaskLegacyConnection & ~(1 << 1))
        scene.advertiseLegacy()
        #expect(scene.scanLegacy(active: true).isEmpty)
        expectCommandComplete(scene.central, .leSetEventMask(EventMask(rawValue: leMaskLegacyConnection)))
        expectCommandComplete(scene.central, .setEventMask(EventMask(rawValue: 0x0000_1FFF_FFFF_FFFF)))
        scene.link.clock.advance(by: .milliseconds(100))
        #expect(scene.central.takeOutput().isEmpty, "LE Meta is off in the default event mask")
        expectCommandComplete(scene.central, .setEventMask(EventMask(rawValue: eventMaskWithLEMeta)))
        scene.link.clock.advance(by: .milliseconds(100))
        #expect(hexLines(scene.central.takeOutput()) == [legacyADVIND, legacySCANRSP])
    }

    @Test("an extended scan with a duration ends with LE Scan Timeout and no more reports")
    func scanTimeout() {
        let scene = AdvertisingScene()
        scene.advertiseExtended(properties: [], data: AdvertisingScene.advertisingData)
        #expect(scene.scanExtended(active: false, filterDuplicates: 1, duration: 50).count == 1)
        scene.link.clock.advance(by: .milliseconds(499))
        #expect(scene.central.takeOutput().isEmpty)
        scene.link.clock.advance(by: .milliseconds(1))
        #expect(hexLines(scene.central.takeOutput()) == ["04 3e 01 11"])
        scene.link.clock.advance(by: .seconds(1))
        #expect(scene.central.takeOutput().isEmpty)
    }

    @Test("an advertising set with Max_Extended_Advertising_Events ends with Advertising Set Terminated, Limit Reached")
    func advertisingEventLimit() {
        let scene = AdvertisingScene()
        #expect(scene.scanExtended(active: false).isEmpty)
        scene.advertiseExtended(properties: [], data: AdvertisingScene.advertisingData, maxEvents: 3)
        scene.link.clock.advance(by: .seconds(1))
        #expect(scene.central.takeOutput().count == 3, "events at 0, 100 and 200 ms")
        #expect(hexLines(scene.peripheral.takeOutput()) == ["04 3e 06 12 43 00 00 00 03"])
    }

    @Test("advertising with a random own address and no random address set is refused as invalid")
    func advertisingNeedsItsAddress() {
        let link = VirtualLink()
        let peripheral = link.addController(publicAddress: VirtualAddress.peripheralPublic)
        bringUpController(peripheral, random: nil)
        expectCommandComplete(peripheral, .leSetAdvertisingParameters(LESetAdvertisingParameters(ownAddressType: 0x01)))
        #expect(hexLines(peripheral.receive(hostPacket: HCICommand.leSetAdvertisingEnable(LESetAdvertisingEnable(enable: true)).packet))
            == ["04 0e 04 01 0a 20 12"])
        // Advertising data is always 31 octets after the length: a short command is malformed.
        #expect(hexLines(peripheral.receive(hostPacket: rawCommand(0x2008, [0x03, 0x02, 0x01, 0x06])))
            == ["04 0e 04 01 08 20 12"])
        // While advertising, LE Set Random Address and new parameters are disallowed.
        expectCommandComplete(peripheral, .leSetAdvertisingParameters(LESetAdvertisingParameters(ownAddressType: 0x00)))
        expectCommandComplete(peripheral, .leSetAdvertisingEnable(LESetAdvertisingEnable(enable: true)))
        #expect(hexLines(peripheral.receive(hostPacket: HCICommand.leSetRandomAddress(LESetRandomAddress(randomAddress: VirtualAddress.peripheralRandom)).packet))
            == ["04 0e 04 01 05 20 0c"])
        #expect(hexLines(peripheral.receive(hostPacket: HCICommand.leSetAdvertisingParameters(LESetAdvertisingParameters()).packet))
            == ["04 0e 04 01 06 20 0c"])
    }
}
