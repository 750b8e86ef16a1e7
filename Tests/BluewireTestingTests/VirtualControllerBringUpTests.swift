import BluewireCore
import BluewireHCI
import BluewireTesting
import Testing

// MARK: helpers shared by the VirtualController tests

/// Bytes from hex text such as "0e 04 01 03 0c 00" (empty on malformed text, which then fails the test).
func hexBytes(_ text: String) -> [UInt8] { parseHex(text) ?? [] }

extension HCIPacket {
    /// The packet with its H4 indicator, as spaced hex: what the assertions compare.
    var hex: String { hexString(h4Bytes, separator: " ") }
}

/// Hex of each packet, for comparing whole outputs with readable failure messages.
func hexLines(_ packets: [HCIPacket]) -> [String] { packets.map(\.hex) }

func rawCommand(_ opcode: UInt16, _ parameters: [UInt8] = []) -> HCIPacket {
    HCIPacket(type: .command, payload: [UInt8(opcode & 0xFF), UInt8(opcode >> 8), UInt8(parameters.count)] + parameters)
}

/// Event_Mask with the defaults plus LE Meta (bit 61).
let eventMaskWithLEMeta: UInt64 = 0x2000_1FFF_FFFF_FFFF
/// LE_Event_Mask enabling every subevent from 0x01 to 0x14 except Enhanced Connection Complete, so that
/// connections report the legacy LE Connection Complete.
let leMaskLegacyConnection: UInt64 = 0x000F_FFFF & ~(1 << 9)
/// LE_Event_Mask enabling every subevent from 0x01 to 0x14.
let leMaskAll: UInt64 = 0x000F_FFFF

/// Sends a command and expects exactly one Command Complete with status success; returns the output.
@discardableResult
func expectCommandComplete(_ controller: VirtualController, _ command: HCICommand, sourceLocation: SourceLocation = #_sourceLocation) -> [HCIPacket] {
    let output = controller.receive(hostPacket: command.packet)
    let opcode = command.opcode.rawValue
    let prefix = hexString([0x04, 0x0E], separator: " ")
    let expected = hexString([UInt8(opcode & 0xFF), UInt8(opcode >> 8), 0x00], separator: " ")
    #expect(output.count >= 1, "no answer to \(command.opcode)", sourceLocation: sourceLocation)
    if let first = output.first {
        #expect(first.hex.hasPrefix(prefix), "\(command.opcode) not answered by Command Complete: \(first.hex)", sourceLocation: sourceLocation)
        #expect(first.hex.dropFirst(12).hasPrefix(expected), "\(command.opcode) failed: \(first.hex)", sourceLocation: sourceLocation)
    }
    return output
}

/// Reset, event masks and random address: the bring-up every host does first.
func bringUpController(_ controller: VirtualController, random: BluetoothAddress?, leEventMask: UInt64 = leMaskLegacyConnection) {
    expectCommandComplete(controller, .reset)
    expectCommandComplete(controller, .setEventMask(EventMask(rawValue: eventMaskWithLEMeta)))
    expectCommandComplete(controller, .leSetEventMask(EventMask(rawValue: leEventMask)))
    if let random { expectCommandComplete(controller, .leSetRandomAddress(LESetRandomAddress(randomAddress: random))) }
}

/// Every packet decodes with BluewireHCI's own decoders (the virtual controller speaks well-formed HCI).
func expectDecodable(_ packets: [HCIPacket], sourceLocation: SourceLocation = #_sourceLocation) {
    for packet in packets {
        switch packet.type {
        case .event:
            #expect(throws: Never.self, "\(packet.hex)", sourceLocation: sourceLocation) { try HCIEvent(packet: packet) }
        case .acl:
            #expect(throws: Never.self, "\(packet.hex)", sourceLocation: sourceLocation) { try ACLPacket(decoding: packet.payload) }
        default:
            Issue.record("unexpected packet type from a controller: \(packet.hex)", sourceLocation: sourceLocation)
        }
    }
}

// MARK: bring-up

@Suite("VirtualController bring-up")
struct VirtualControllerBringUpTests {
    let controller = VirtualController(configuration: .init(publicAddress: VirtualAddress.centralPublic))

    @Test("Reset is answered with Command Complete, one command credit, status success")
    func reset() {
        #expect(hexLines(controller.receive(hostPacket: HCICommand.reset.packet)) == ["04 0e 04 01 03 0c 00"])
    }

    @Test("informational commands return the configured version, address and buffer sizes")
    func informationalCommands() {
        #expect(hexLines(controller.receive(hostPacket: HCICommand.readLocalVersionInformation.packet))
            == ["04 0e 0c 01 01 10 00 0c 01 00 0c ff ff 01 00"])
        #expect(hexLines(controller.receive(hostPacket: HCICommand.readBDADDR.packet))
            == ["04 0e 0a 01 09 10 00 01 00 00 dc 1b 00"])
        #expect(hexLines(controller.receive(hostPacket: HCICommand.readBufferSize.packet))
            == ["04 0e 0b 01 05 10 00 fb 00 00 08 00 00 00"])
        #expect(hexLines(controller.receive(hostPacket: HCICommand.leReadBufferSize.packet))
            == ["04 0e 07 01 02 20 00 fb 00 08"])
        #expect(hexLines(controller.receive(hostPacket: HCICommand.leReadBufferSizeV2.packet))
            == ["04 0e 0a 01 60 20 00 fb 00 08 00 00 00"])
        // LE-only: BR/EDR Not Supported (bit 37) and LE Supported (Controller) (bit 38).
        #expect(hexLines(controller.receive(hostPacket: HCICommand.readLocalSupportedFeatures.packet))
            == ["04 0e 0c 01 03 10 00 00 00 00 00 60 00 00 00"])
        // Peripheral-initiated feature exchange (3), DLE (5), 2M (8), extended advertising (12), CSA #2 (14).
        #expect(hexLines(controller.receive(hostPacket: HCICommand.leReadLocalSupportedFeatures.packet))
            == ["04 0e 0c 01 03 20 00 28 51 00 00 00 00 00 00"])
    }

    @Test("buffer sizes, features, version and command credits follow the configuration")
    func configuredValues() {
        var config = VirtualController.Configuration(publicAddress: VirtualAddress.peripheralPublic)
        config.leBufferSize = .init(packetLength: 27, packetCount: 3)
        config.hciVersion = 0x0B
        config.companyIdentifier = 0x05F1
        config.numHCICommandPackets = 4
        config.leFeatures = [.dataPacketLengthExtension]
        let custom = VirtualController(configuration: config)
        #expect(hexLines(custom.receive(hostPacket: HCICommand.leReadBufferSize.packet)) == ["04 0e 07 04 02 20 00 1b 00 03"])
        #expect(hexLines(custom.receive(hostPacket: HCICommand.readLocalVersionInformation.packet))
            == ["04 0e 0c 04 01 10 00 0b 01 00 0b f1 05 01 00"])
        #expect(hexLines(custom.receive(hostPacket: HCICommand.leReadLocalSupportedFeatures.packet))
            == ["04 0e 0c 04 03 20 00 20 00 00 00 00 00 00 00"])
    }

    @Test("shared buffers: LE Read Buffer Size reports 0 × 0 and the host must use Read Buffer Size")
    func sharedBuffers() {
        var config = VirtualController.Configuration(publicAddress: VirtualAddress.peripheralPublic)
        config.leBufferSize = nil
        config.aclBufferSize = .init(packetLength: 1021, packetCount: 5)
        let shared = VirtualController(configuration: config)
        #expect(hexLines(shared.receive(hostPacket: HCICommand.leReadBufferSize.packet)) == ["04 0e 07 01 02 20 00 00 00 00"])
        #expect(hexLines(shared.receive(hostPacket: HCICommand.readBufferSize.packet)) == ["04 0e 0b 01 05 10 00 fd 03 00 05 00 00 00"])
    }

    @Test("the supported commands bit map matches what the controller answers, LE Read Buffer Size v2 included")
    func supportedCommandsBitmap() throws {
        let output = controller.receive(hostPacket: HCICommand.readLocalSupportedCommands.packet)
        let payload = try #require(output.first?.payload)
        #expect(payload.count == 2 + 3 + 1 + 64)
        let map = Array(payload.dropFirst(6))
        func bit(_ octet: Int, _ bit: Int) -> Bool { map[octet] & (1 << UInt8(bit)) != 0 }
        #expect(bit(41, 5), "LE Read Buffer Size v2")
        #expect(bit(25, 1) && bit(5, 7) && bit(0, 5), "LE Read Buffer Size, Reset, Disconnect")
        #expect(bit(36, 2) && bit(37, 7), "extended advertising and extended create connection")
        #expect(bit(35, 6) && bit(33, 6), "LE Set PHY and LE Set Data Length")
        #expect(bit(28, 0) && bit(28, 1) && bit(28, 2), "LE Enable Encryption and both LTK Request replies")
        #expect(bit(27, 6) && bit(34, 1) && bit(34, 2), "LE Encrypt, LE Read Local P-256 Public Key, LE Generate DHKey")

        var withoutCrypto = VirtualController.Configuration(publicAddress: VirtualAddress.peripheralPublic)
        withoutCrypto.controllerCrypto = false
        let plain = VirtualController(configuration: withoutCrypto)
        let plainMap = Array((plain.receive(hostPacket: HCICommand.readLocalSupportedCommands.packet).first?.payload ?? []).dropFirst(6))
        #expect(plainMap.count == 64 && plainMap[27] & 0x40 == 0 && plainMap[34] & 0x06 == 0, "no crypto bits with controllerCrypto off")
        #expect(hexLines(plain.receive(hostPacket: rawCommand(0x2017, [UInt8](repeating: 0, count: 32)))) == ["04 0e 04 01 17 20 01"],
                "and LE Encrypt is then an unknown command")

        var config = VirtualController.Configuration(publicAddress: VirtualAddress.peripheralPublic)
        config.leFeatures = [.dataPacketLengthExtension]
        let legacyOnly = VirtualController(configuration: config)
        let legacyMap = Array((legacyOnly.receive(hostPacket: HCICommand.readLocalSupportedCommands.packet).first?.payload ?? []).dropFirst(6))
        #expect(legacyMap.count == 64)
        #expect(legacyMap[36] == 0 && legacyMap[37] & 0xE3 == 0, "no extended advertising bits without the feature")
        #expect(legacyMap[35] & 0x70 == 0, "no PHY commands without 2M or Coded")
        // And the commands it does not claim are indeed unknown to it.
        #expect(hexLines(legacyOnly.receive(hostPacket: HCICommand.leReadNumberOfSupportedAdvertisingSets.packet))
            == ["04 0e 04 01 3b 20 01"])
    }

    @Test("an unknown command gets Command Complete with Unknown HCI Command, or Command Status, or silence as configured")
    func unknownCommands() {
        #expect(hexLines(controller.receive(hostPacket: rawCommand(0xFC01, [1, 2]))) == ["04 0e 04 01 01 fc 01"])
        // LE Generate DHKey [v2] (0x205E) is a real command the virtual controller does not implement.
        #expect(hexLines(controller.receive(hostPacket: rawCommand(0x205E, [0]))) == ["04 0e 04 01 5e 20 01"])

        var config = VirtualController.Configuration(publicAddress: VirtualAddress.peripheralPublic)
        config.unknownCommandResponse = .commandStatus
        let statusController = VirtualController(configuration: config)
        #expect(hexLines(statusController.receive(hostPacket: rawCommand(0xFC01))) == ["04 0f 04 01 01 01 fc"])

        config.unknownCommandResponse = .silence
        let silent = VirtualController(configuration: config)
        #expect(silent.receive(hostPacket: rawCommand(0xFC01)).isEmpty)
        #expect(hexLines(silent.receive(hostPacket: HCICommand.reset.packet)) == ["04 0e 04 01 03 0c 00"], "known commands still answered")
    }

    @Test("a command whose parameter length is wrong is refused as invalid and recorded as a host violation")
    func malformedCommand() {
        // LE Set Event Mask with 4 parameter octets instead of 8.
        #expect(hexLines(controller.receive(hostPacket: rawCommand(0x2001, [0xFF, 0xFF, 0xFF, 0xFF]))) == ["04 0e 04 01 01 20 12"])
        // Parameter_Total_Length says 8 but 2 octets follow.
        let truncated = HCIPacket(type: .command, payload: [0x01, 0x20, 0x08, 0xFF, 0xFF])
        #expect(hexLines(controller.receive(hostPacket: truncated)) == ["04 0e 04 01 01 20 12"])
        #expect(controller.violations == [.malformedCommand(bytes: [0x01, 0x20, 0x08, 0xFF, 0xFF])])
        // An event sent to a controller is a host bug too.
        #expect(controller.receive(hostPacket: HCIPacket(type: .event, payload: [0x0E, 0x00])).isEmpty)
        #expect(controller.violations.last == .unexpectedPacketType(0x04))
    }

    @Test("LE Rand is deterministic for a given seed and differs between draws")
    func leRand() {
        let first = controller.receive(hostPacket: HCICommand.raw(opcode: .leRand, parameters: []).packet)
        let second = controller.receive(hostPacket: HCICommand.raw(opcode: .leRand, parameters: []).packet)
        let again = VirtualController(configuration: .init(publicAddress: VirtualAddress.centralPublic))
            .receive(hostPacket: HCICommand.raw(opcode: .leRand, parameters: []).packet)
        #expect(first.first?.payload.count == 14)
        #expect(hexLines(first) == hexLines(again))
        #expect(hexLines(first) != hexLines(second))
    }

    @Test("Hardware Error is injected as event 0x10 unless the event mask masks it")
    func hardwareError() {
        controller.injectHardwareError(code: 0x42)
        #expect(hexLines(controller.takeOutput()) == ["04 10 01 42"])
        controller.receive(hostPacket: HCICommand.setEventMask(EventMask(rawValue: 0)).packet)
        controller.injectHardwareError(code: 0x42)
        #expect(controller.takeOutput().isEmpty)
    }

    @Test("an unresponsive controller and silenced opcodes answer nothing, until the fault is cleared")
    func stopAnswering() {
        controller.faults.isUnresponsive = true
        #expect(controller.receive(hostPacket: HCICommand.reset.packet).isEmpty)
        controller.faults.isUnresponsive = false
        controller.faults.silentOpcodes = [HCIOpcode.leReadBufferSize.rawValue]
        #expect(controller.receive(hostPacket: HCICommand.leReadBufferSize.packet).isEmpty)
        #expect(hexLines(controller.receive(hostPacket: HCICommand.reset.packet)) == ["04 0e 04 01 03 0c 00"])
    }

    @Test("after legacy advertising commands, extended ones are disallowed until Reset (and the other way round)")
    func commandFamiliesDoNotMix() {
        expectCommandComplete(controller, .leSetAdvertisingParameters(LESetAdvertisingParameters(ownAddressType: 0)))
        #expect(hexLines(controller.receive(hostPacket: HCICommand.leReadNumberOfSupportedAdvertisingSets.packet))
            == ["04 0e 04 01 3b 20 0c"])
        expectCommandComplete(controller, .reset)
        #expect(hexLines(controller.receive(hostPacket: HCICommand.leReadNumberOfSupportedAdvertisingSets.packet))
            == ["04 0e 05 01 3b 20 00 04"])
        #expect(hexLines(controller.receive(hostPacket: HCICommand.leSetScanEnable(LESetScanEnable(enable: false)).packet))
            == ["04 0e 04 01 0c 20 0c"])
    }

    @Test("every answer of the bring-up sequence decodes with BluewireHCI's decoders")
    func answersDecode() {
        var all: [HCIPacket] = []
        for command: HCICommand in [
            .reset, .readLocalVersionInformation, .readLocalSupportedCommands, .readLocalSupportedFeatures, .readBDADDR,
            .readBufferSize, .leReadBufferSize, .leReadBufferSizeV2, .leReadLocalSupportedFeatures,
            .setEventMask(EventMask(rawValue: eventMaskWithLEMeta)), .leSetEventMask(EventMask(rawValue: leMaskAll)),
            .leReadSuggestedDefaultDataLength, .leReadMaximumAdvertisingDataLength,
        ] {
            all += controller.receive(hostPacket: command.packet)
        }
        #expect(all.count == 13)
        expectDecodable(all)
    }
}
