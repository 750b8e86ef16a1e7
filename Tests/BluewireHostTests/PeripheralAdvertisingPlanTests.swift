import Bluewire
import BluewireCore
import BluewireHCI
import Testing

/// Controllers as bring-up would describe them.
enum TestControllers {
    static let address = BluetoothAddress(0xC1, 0x22, 0x33, 0x44, 0x55, 0x66, type: .random)

    static func info(features: LEFeatures, commands: [HCIOpcode], maxData: UInt16 = 31) -> ControllerInfo {
        var octets = [UInt8](repeating: 0, count: 64)
        for opcode in commands {
            guard let (octet, bit) = LocalSupportedCommands.bitPosition(of: opcode) else { continue }
            octets[octet] |= 1 << bit
        }
        return ControllerInfo(
            version: LocalVersionInformation(hciVersion: 9, hciSubversion: 0, lmpVersion: 9, companyIdentifier: 0xFFFF, lmpSubversion: 0),
            supportedCommands: LocalSupportedCommands(octets: octets), leFeatures: features,
            leACLDataPacketLength: 27, totalNumLEACLDataPackets: 8, randomAddress: address,
            maxAdvertisingDataLength: maxData)
    }

    static let legacyCommands: [HCIOpcode] = [
        .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData, .leSetAdvertisingEnable,
    ]
    static let extendedCommands: [HCIOpcode] = [
        .leSetAdvertisingSetRandomAddress, .leSetExtendedAdvertisingParameters, .leSetExtendedAdvertisingData,
        .leSetExtendedScanResponseData, .leSetExtendedAdvertisingEnable,
    ]
    /// The extended advertising feature bit without the commands, as bumble's controller reports it.
    static let bumbleLike = info(features: [.leExtendedAdvertising], commands: legacyCommands)
    static let extended = info(features: [.leExtendedAdvertising], commands: legacyCommands + extendedCommands, maxData: 1650)
}

@Suite("Peripheral: advertising plans")
struct PeripheralAdvertisingPlanTests {
    static let named = Advertisement(data: [.flags([.leGeneralDiscoverableMode, .brEdrNotSupported]), .completeLocalName("Bluewire")])

    @Test func legacyCommandsWhenTheControllerDoesNotListTheExtendedOnes() throws {
        let plan = try AdvertisingPlan(Self.named, controller: TestControllers.bumbleLike)
        #expect(plan.kind == .legacy)
        #expect(plan.configuration.map(\.opcode) == [.leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData])
        guard case .leSetAdvertisingParameters(let parameters) = plan.configuration[0] else { return }
        #expect(parameters.advertisingType == 0x00, "ADV_IND: connectable and scannable undirected")
        #expect(parameters.ownAddressType == 0x01, "own address type random (the Host's static address)")
        #expect(plan.advertisingData == [0x02, 0x01, 0x06, 0x09, 0x09] + Array("Bluewire".utf8))
        #expect(plan.enable.encoded == [0x0A, 0x20, 0x01, 0x01])
        #expect(plan.disable.encoded == [0x0A, 0x20, 0x01, 0x00])
    }

    @Test func extendedCommandsWithLegacyPDUsWhenTheDataFits() throws {
        let plan = try AdvertisingPlan(Self.named, controller: TestControllers.extended)
        #expect(plan.kind == .extended(legacyPDUs: true))
        guard case .leSetExtendedAdvertisingParameters(let parameters) = plan.configuration[0] else {
            Issue.record("first command is \(plan.configuration[0].opcode)")
            return
        }
        #expect(parameters.eventProperties == [.legacy, .connectable, .scannable])
        #expect(parameters.ownAddressType == 0x01)
        // The set's own random address: handle 0, then the address little-endian (§7.8.52).
        #expect(plan.configuration[1].encoded == [0x35, 0x20, 0x07, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0xC1])
        #expect(plan.configuration.map(\.opcode).suffix(2) == [.leSetExtendedAdvertisingData, .leSetExtendedScanResponseData])
        #expect(plan.enable.encoded == [0x39, 0x20, 0x06, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00])
    }

    @Test func extendedPDUsCarryLongDataInFragmentsOfAtMost251Octets() throws {
        let payload = [UInt8](repeating: 0xAB, count: 250)
        let advertisement = Advertisement(
            data: (0..<3).map { .manufacturerSpecificData(companyIdentifier: 0xFFFF, data: Array(payload.prefix(200 + $0))) },
            isConnectable: false)
        let plan = try AdvertisingPlan(advertisement, controller: TestControllers.extended)
        #expect(plan.kind == .extended(legacyPDUs: false))
        #expect(plan.advertisingData.count == 615)
        let fragments = plan.configuration.compactMap { command -> ExtendedAdvertisingDataFragment? in
            if case .leSetExtendedAdvertisingData(let data) = command { return data.fragment }
            return nil
        }
        #expect(fragments.map(\.operation) == [0x01, 0x00, 0x02], "first, intermediate, last (§7.8.54)")
        #expect(fragments.map(\.data.count) == [251, 251, 113])
        #expect(fragments.flatMap { Array($0.data) } == plan.advertisingData)
        guard case .leSetExtendedAdvertisingParameters(let parameters) = plan.configuration[0] else { return }
        #expect(parameters.eventProperties == [], "non-connectable, non-scannable extended advertising")
    }

    @Test func legacyDataThatDoesNotFitNamesTheStructureAndTheRoomLeft() {
        let advertisement = Advertisement(data: [.flags([.leGeneralDiscoverableMode]), .completeLocalName(String(repeating: "n", count: 30))])
        #expect {
            try AdvertisingPlan(advertisement, controller: TestControllers.bumbleLike)
        } throws: { error in
            guard case PeripheralError.advertisingData(.doesNotFit(let type, let needed, let available), let scanResponse) = error else { return false }
            return type == .completeLocalName && needed == 32 && available == 28 && !scanResponse
                && "\(error)".contains("Complete Local Name")
        }
    }

    @Test func scanResponseThatDoesNotFitIsReportedAsTheScanResponse() {
        let advertisement = Advertisement(data: [], scanResponse: [.manufacturerSpecificData(companyIdentifier: 1, data: [UInt8](repeating: 0, count: 40))])
        #expect {
            try AdvertisingPlan(advertisement, controller: TestControllers.bumbleLike)
        } throws: { error in
            if case PeripheralError.advertisingData(_, scanResponse: true) = error { true } else { false }
        }
    }

    @Test func connectableExtendedPDUsHaveNoScanResponseAndAtMost191Octets() {
        let long = Advertisement(
            data: [.manufacturerSpecificData(companyIdentifier: 1, data: [UInt8](repeating: 0, count: 200))],
            scanResponse: [.completeLocalName("x")])
        #expect(throws: PeripheralError.self) { try AdvertisingPlan(long, controller: TestControllers.extended) }
        do {
            _ = try AdvertisingPlan(long, controller: TestControllers.extended)
        } catch {
            guard case .scanResponseNotAllowed = error else { Issue.record("\(error)"); return }
        }
        var tooLong = long
        tooLong.scanResponse = []
        do {
            _ = try AdvertisingPlan(tooLong, controller: TestControllers.extended)
            Issue.record("204 octets of connectable extended data accepted")
        } catch {
            guard case .advertisingData(.doesNotFit(_, let needed, let available), false) = error else { Issue.record("\(error)"); return }
            #expect(needed == 204 && available == AdvertisingPlan.connectableExtendedDataLimit)
        }
    }

    @Test(arguments: [(false, 0x03 as UInt8), (true, 0x02 as UInt8)])
    func nonConnectableLegacyAdvertisingIsScannableOnlyWithAScanResponse(hasResponse: Bool, type: UInt8) throws {
        let advertisement = Advertisement(
            data: [.completeLocalName("beacon")], scanResponse: hasResponse ? [.txPowerLevel(0)] : [], isConnectable: false)
        let plan = try AdvertisingPlan(advertisement, controller: TestControllers.bumbleLike)
        guard case .leSetAdvertisingParameters(let parameters) = plan.configuration[0] else { return }
        #expect(parameters.advertisingType == type, "ADV_NONCONN_IND 0x03 / ADV_SCAN_IND 0x02")
        #expect(!plan.isConnectable && plan.isScannable == hasResponse)
    }

    @Test(arguments: [(0x001F as UInt32, 0x0100 as UInt32), (0x0200, 0x0100), (0x0020, 0x4001)])
    func intervalsOutsideTheLegacyRangeAreRefused(min: UInt32, max: UInt32) {
        let advertisement = Advertisement(data: [], intervalMin: min, intervalMax: max)
        #expect {
            try AdvertisingPlan(advertisement, controller: TestControllers.bumbleLike)
        } throws: { error in
            if case PeripheralError.invalidAdvertisingInterval(min, max) = error { true } else { false }
        }
    }

    @Test func forcedExtendedCommandsOnAControllerThatDoesNotListThem() throws {
        var advertisement = Self.named
        advertisement.commandSet = .extended
        #expect(try AdvertisingPlan(advertisement, controller: TestControllers.bumbleLike).kind == .extended(legacyPDUs: true))
        advertisement.commandSet = .legacy
        #expect(try AdvertisingPlan(advertisement, controller: TestControllers.bumbleLike).kind == .legacy)
    }

    @Test func legacyOnAnExtendedControllerSendsLegacyPDUsThroughTheExtendedCommands() throws {
        var advertisement = Advertisement(data: [.completeLocalName("short")], commandSet: .legacy)
        advertisement.prefersLegacyPDUs = false
        let plan = try AdvertisingPlan(advertisement, controller: TestControllers.extended)
        #expect(plan.kind == .extended(legacyPDUs: true), "the legacy commands are refused after extended ones (§3.1.1)")
        advertisement.data = [.completeLocalName(String(repeating: "x", count: 40))]
        #expect(throws: PeripheralError.self, "legacy PDUs still carry at most 31 octets") {
            try AdvertisingPlan(advertisement, controller: TestControllers.extended)
        }
    }
}

@Suite("Peripheral: advertisement layout")
struct PeripheralAdvertisementLayoutTests {
    @Test func flagsServicesAndAShortNameAllGoInTheAdvertisingData() throws {
        let advertisement = try Advertisement(name: "Chat", services: [BluetoothUUID(0x180D)])
        #expect(advertisement.data == [
            .flags([.leGeneralDiscoverableMode, .brEdrNotSupported]),
            .serviceUUIDs([BluetoothUUID(0x180D)], complete: true),
            .completeLocalName("Chat"),
        ])
        #expect(advertisement.scanResponse.isEmpty)
    }

    @Test func aNameThatDoesNotFitBesideA128BitServiceIsShortenedInTheAdvertisingData() throws {
        let service = BluetoothUUID(parsing: "6e400001-b5a3-f393-e0a9-e50e24dcca9e")!
        let advertisement = try Advertisement(name: "Magic 8-Ball", services: [service])
        // Passive scanners see a name too: shortened beside the UUID, complete in the scan response.
        #expect(advertisement.data == [
            .flags([.leGeneralDiscoverableMode, .brEdrNotSupported]),
            .shortenedLocalName("Magic 8-"),
            .serviceUUIDs([service], complete: true),
        ])
        #expect(advertisement.scanResponse == [.completeLocalName("Magic 8-Ball")])
        let plan = try AdvertisingPlan(advertisement, controller: TestControllers.bumbleLike)
        #expect(plan.advertisingData.count == 31 && plan.scanResponseData.count == 14)
    }

    @Test func aNameTooLongForEitherIsShortenedAndMarkedSo() throws {
        let name = String(repeating: "a", count: 40)
        let advertisement = try Advertisement(name: name, services: [])
        #expect(advertisement.data.last == .shortenedLocalName(String(repeating: "a", count: 26)),
                "the shortened name fills the rest of the advertising data")
        #expect(try AdvertisingPlan(advertisement, controller: TestControllers.bumbleLike).advertisingData.count == 31)
    }

    @Test func servicesThatDoNotAllFitAreListedAsIncomplete() throws {
        let services = (0..<20).map { BluetoothUUID(UInt16(0x1800 + $0)) }
        let advertisement = try Advertisement(name: nil, services: services)
        guard advertisement.data.count == 2, case .serviceUUIDs(let listed, let complete) = advertisement.data[1] else {
            Issue.record("no service list in the advertising data: \(advertisement.data)")
            return
        }
        #expect(!complete && listed == Array(services.prefix(13)), "as many as fit the 28 octets after Flags")
        #expect(advertisement.scanResponse.isEmpty, "20 UUIDs fit no scan response either")
    }

    @Test func aListTooLongForTheDataIsCompleteInTheScanResponse() throws {
        let services = (0..<14).map { BluetoothUUID(UInt16(0x1800 + $0)) }
        let advertisement = try Advertisement(name: nil, services: services)
        #expect(advertisement.scanResponse == [.serviceUUIDs(services, complete: true)])
        #expect(advertisement.data.last == .serviceUUIDs(Array(services.prefix(13)), complete: false))
    }

    @Test func anExtraStructureThatFitsNowhereIsAnError() {
        #expect(throws: PeripheralError.self) {
            try Advertisement(name: "x", extra: [.manufacturerSpecificData(companyIdentifier: 1, data: [UInt8](repeating: 1, count: 40))])
        }
    }
}
