import Testing
import BluewireCore
@testable import BluewireHCI

@Suite struct HCICommandEncodingTests {
    @Test func resetEncodesOpcodeAndZeroLength() {
        #expect(HCICommand.reset.encoded == [0x03, 0x0C, 0x00])
        #expect(HCICommand.reset.packet.h4Bytes == [0x01, 0x03, 0x0C, 0x00])
    }

    @Test func opcodeSplitsIntoGroupAndCommandFields() {
        #expect(HCIOpcode.leSetScanEnable.ogf == 0x08)
        #expect(HCIOpcode.leSetScanEnable.ocf == 0x000C)
        #expect(HCIOpcode(ogf: 0x03, ocf: 0x0003) == .reset)
        #expect(HCIOpcode.leReadBufferSizeV2.description == "LE Read Buffer Size [v2] (0x2060)")
        #expect(HCIOpcode(rawValue: 0xFC01).name == nil)
        #expect(HCIOpcode(rawValue: 0xFC01).isVendorSpecific)
    }

    @Test func extendedScanParametersMatchAndroidCapture() throws {
        // From a real Android capture: LE Set Extended Scan Parameters, random own address, 1M active.
        let captured = bytes("4120 08 01 00 01 01 1200 1200")
        let command = try HCICommand(decoding: captured[...])
        let expected = LESetExtendedScanParameters(
            ownAddressType: 1, scanningFilterPolicy: 0,
            le1M: .init(active: true, scanInterval: 0x12, scanWindow: 0x12), leCoded: nil)
        #expect(command == .leSetExtendedScanParameters(expected))
        #expect(command.encoded == captured)
    }

    @Test func extendedCreateConnectionMatchesAndroidCapture() throws {
        let captured = bytes("4320 1a 00 01 00 2b5c62cb0bd8 01 6000 3000 1800 2800 0000 f401 0000 0000")
        let command = try HCICommand(decoding: captured[...])
        guard case .leExtendedCreateConnection(let p) = command else {
            Issue.record("decoded \(command)")
            return
        }
        #expect(p.peerAddress == BluetoothAddress(0xD8, 0x0B, 0xCB, 0x62, 0x5C, 0x2B))
        #expect(p.le1M?.scanWindow == 0x30)
        #expect(p.le1M?.connection.supervisionTimeout == 0x01F4)
        #expect(p.le2M == nil && p.leCoded == nil)
        #expect(command.encoded == captured)
    }

    @Test func setDataLengthMatchesCapture() throws {
        let captured = bytes("2220 06 0200 fb00 4808")
        #expect(try HCICommand(decoding: captured[...]) == .leSetDataLength(LESetDataLength(connectionHandle: 2, txOctets: 251, txTime: 0x0848)))
    }

    @Test func legacyAdvertisingDataIsPaddedTo31Octets() throws {
        let data: [UInt8] = [0x02, 0x01, 0x06]
        let encoded = HCICommand.leSetAdvertisingData(LESetAdvertisingData(advertisingData: data)).encoded
        #expect(encoded.count == 3 + 32)
        #expect(Array(encoded.prefix(7)) == [0x08, 0x20, 0x20, 0x03, 0x02, 0x01, 0x06])
        #expect(encoded.dropFirst(7).allSatisfy { $0 == 0 })
        guard case .leSetAdvertisingData(let back) = try HCICommand(decoding: encoded[...]) else {
            Issue.record("not decoded as LE Set Advertising Data")
            return
        }
        #expect(Array(back.advertisingData) == data)
    }

    static let everyCommand: [HCICommand] = [
        .reset, .readLocalVersionInformation, .readLocalSupportedCommands, .readLocalSupportedFeatures, .readBDADDR,
        .readBufferSize, .setEventMask(EventMask(rawValue: 0x2000_8000_0000_8090)),
        .leSetEventMask(EventMask(rawValue: 0x0000_0000_000F_FFFF)), .leReadBufferSize, .leReadBufferSizeV2,
        .leReadLocalSupportedFeatures,
        .leSetRandomAddress(LESetRandomAddress(randomAddress: .randomStatic(0x1234_5678_9ABC))),
        .leSetScanParameters(LESetScanParameters(active: false, scanInterval: 0x10, scanWindow: 0x10)),
        .leSetScanEnable(LESetScanEnable(enable: true, filterDuplicates: true)),
        .leSetExtendedScanParameters(LESetExtendedScanParameters(le1M: .init(), leCoded: .init(active: false))),
        .leSetExtendedScanEnable(LESetExtendedScanEnable(enable: true, filterDuplicates: 1, duration: 500, period: 0)),
        .leSetAdvertisingParameters(LESetAdvertisingParameters(advertisingType: 0x03)),
        .leSetAdvertisingData(LESetAdvertisingData(advertisingData: [0x02, 0x01, 0x06])),
        .leSetScanResponseData(LESetScanResponseData(scanResponseData: [0x03, 0x09, 0x41, 0x42])),
        .leSetAdvertisingEnable(LESetAdvertisingEnable(enable: true)),
        .leSetExtendedAdvertisingParameters(LESetExtendedAdvertisingParameters(advertisingHandle: 1, eventProperties: [.connectable], advertisingTxPower: -4, secondaryAdvertisingPHY: 2, advertisingSID: 3)),
        .leSetExtendedAdvertisingData(LESetExtendedAdvertisingData(ExtendedAdvertisingDataFragment(advertisingHandle: 1, data: [0x02, 0x01, 0x06][...]))),
        .leSetExtendedScanResponseData(LESetExtendedScanResponseData(ExtendedAdvertisingDataFragment(data: [0x02, 0x0A, 0x00][...]))),
        .leSetExtendedAdvertisingEnable(LESetExtendedAdvertisingEnable(enable: true, sets: [.init(advertisingHandle: 1, duration: 100), .init(advertisingHandle: 2)])),
        .leRemoveAdvertisingSet(LERemoveAdvertisingSet(advertisingHandle: 1)), .leClearAdvertisingSets,
        .leReadMaximumAdvertisingDataLength, .leReadNumberOfSupportedAdvertisingSets,
        .leCreateConnection(LECreateConnection(peerAddress: BluetoothAddress(value: 0xC0FF_EE00_0001, type: .random))),
        .leExtendedCreateConnection(LEExtendedCreateConnection(peerAddress: BluetoothAddress(value: 0x11, type: .public), le2M: .init(), leCoded: .init())),
        .leCreateConnectionCancel, .disconnect(Disconnect(connectionHandle: 0x40)),
        .leConnectionUpdate(LEConnectionUpdate(connectionHandle: 1, connection: LEConnectionParameters(maxLatency: 4))),
        .leSetDataLength(LESetDataLength(connectionHandle: 1)), .leReadSuggestedDefaultDataLength,
        .leWriteSuggestedDefaultDataLength(LEWriteSuggestedDefaultDataLength()),
        .leSetPHY(LESetPHY(connectionHandle: 1, txPHYs: .le2M, rxPHYs: [.le2M, .le1M], phyOptions: 1)),
        .leSetDefaultPHY(LESetDefaultPHY(txPHYs: [.le1M, .le2M], rxPHYs: [.le1M, .le2M])),
        .leReadPHY(ConnectionHandleParameter(connectionHandle: 3)),
        .readRemoteVersionInformation(ConnectionHandleParameter(connectionHandle: 3)),
        .leReadRemoteFeatures(ConnectionHandleParameter(connectionHandle: 3)),
        .leEnableEncryption(LEEnableEncryption(
            connectionHandle: 0x40, randomNumber: 0x0102_0304_0506_0708, encryptedDiversifier: 0x1234,
            longTermKey: Array(0..<16))),
        .leLongTermKeyRequestReply(LELongTermKeyRequestReply(connectionHandle: 0x40, longTermKey: Array(0..<16))),
        .leLongTermKeyRequestNegativeReply(ConnectionHandleParameter(connectionHandle: 0x40)),
    ]

    @Test(arguments: everyCommand)
    func everyCommandRoundTripsThroughDecoding(_ command: HCICommand) throws {
        let encoded = command.encoded
        #expect(Int(encoded[2]) == encoded.count - 3, "length octet of \(command.opcode)")
        #expect(try HCICommand(decoding: encoded[...]) == command)
        #expect(command.opcode.name != nil)
    }
}

@Suite struct HCICommandDecodingTests {
    @Test func vendorOpcodeDecodesToRawWithItsParameters() throws {
        let command = try HCICommand(decoding: bytes("53fd 08 01600608010a0060")[...])
        guard case .raw(let opcode, let parameters) = command else {
            Issue.record("expected raw, got \(command)")
            return
        }
        #expect(opcode == HCIOpcode(rawValue: 0xFD53))
        #expect(Array(parameters) == bytes("01600608010a0060"))
    }

    @Test func truncatedKnownCommandNamesFieldAndPacketOffset() {
        // LE Set Scan Enable with only one of its two parameters.
        #expect(throws: DecodeError(.truncated(needed: 1, available: 0), layer: "hci", field: "Filter_Duplicates", offset: 4)) {
            _ = try HCICommand(decoding: bytes("0c20 01 01")[...])
        }
    }

    @Test func parameterLengthBeyondPacketIsTruncation() {
        #expect(throws: DecodeError(.truncated(needed: 5, available: 2), layer: "hci", field: "Parameters", offset: 3)) {
            _ = try HCICommandPacket(decoding: bytes("0c20 05 0100")[...])
        }
    }
}
