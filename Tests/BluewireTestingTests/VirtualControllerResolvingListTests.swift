import BluewireCore
import BluewireHCI
import BluewireTesting
import Testing

/// The virtual controller's resolving list commands (Core Vol 4 Part E §7.8.38, §7.8.40, §7.8.41,
/// §7.8.44) and their Command Disallowed rules, command by command. What resolution does on the link
/// (identities with type 0x02/0x03 in reports and connections) is checked with two engines in
/// `EngineResolvingListTests`.
@Suite("Virtual controller: resolving list commands")
struct VirtualControllerResolvingListTests {
    static let irk: [UInt8] = (0..<16).map { UInt8($0) }
    static let zeros = [UInt8](repeating: 0, count: 16)

    static func controller(llPrivacy: Bool, listSize: UInt8 = 2) -> VirtualController {
        var configuration = VirtualController.Configuration(publicAddress: VirtualAddress.centralPublic)
        if llPrivacy { configuration.leFeatures.insert(.llPrivacy) }
        configuration.resolvingListSize = listSize
        let controller = VirtualController(configuration: configuration)
        bringUpController(controller, random: VirtualAddress.centralRandom)
        return controller
    }

    /// The status of the Command Complete answering `command`.
    static func status(_ controller: VirtualController, _ command: HCICommand) -> UInt8? {
        let output = controller.receive(hostPacket: command.packet)
        guard let first = output.first, first.payload.first == 0x0E, first.payload.count >= 6 else { return nil }
        return first.payload[first.payload.startIndex + 5]
    }

    static func add(_ value: UInt64) -> HCICommand {
        .leAddDeviceToResolvingList(LEAddDeviceToResolvingList(
            peerIdentityAddress: BluetoothAddress(value: 0xC0_00_00_00_00_00 | value, type: .random), peerIRK: irk, localIRK: zeros))
    }

    static let enable = HCICommand.leSetAddressResolutionEnable(LESetAddressResolutionEnable(enable: true))

    @Test("the four commands are in Supported_Commands (octet 34 bits 3, 5, 6; octet 35 bit 1) only with LL Privacy")
    func supportedCommandBits() throws {
        for llPrivacy in [false, true] {
            let output = Self.controller(llPrivacy: llPrivacy).receive(hostPacket: HCICommand.readLocalSupportedCommands.packet)
            let payload = Array(try #require(output.first).payload)
            // Event code, length, Num_HCI_Command_Packets, opcode, Status, then the 64 octets.
            #expect(payload[5] == 0x00)
            let octets = Array(payload[6...])  // Supported_Commands after Status
            #expect(octets.count == 64)
            #expect((octets[34] & 0b0110_1000 == 0b0110_1000) == llPrivacy, "octet 34: \(octets[34])")
            #expect((octets[35] & 0b0000_0010 != 0) == llPrivacy, "octet 35: \(octets[35])")
            #expect(octets[34] & 0b1001_0000 == 0, "Remove Device and Read Peer Resolvable Address are not claimed")
        }
        // Without the feature they are unknown commands.
        #expect(Self.status(Self.controller(llPrivacy: false), .leReadResolvingListSize) == 0x01)
    }

    @Test("size, full list, duplicate identity, and Command Disallowed while scanning with resolution on")
    func commandRules() {
        let controller = Self.controller(llPrivacy: true)
        let size = controller.receive(hostPacket: HCICommand.leReadResolvingListSize.packet)
        #expect(size.first.map { Array($0.payload.suffix(2)) } == [0x00, 0x02], "Status 0, Resolving_List_Size 2")
        #expect(Self.status(controller, Self.add(1)) == 0x00)
        #expect(Self.status(controller, Self.add(1)) == 0x12, "the same identity twice: Invalid HCI Command Parameters")
        #expect(Self.status(controller, Self.add(2)) == 0x00)
        #expect(Self.status(controller, Self.add(3)) == 0x07, "full: Memory Capacity Exceeded")
        #expect(Self.status(controller, .leClearResolvingList) == 0x00)
        #expect(Self.status(controller, Self.add(1)) == 0x00)

        // Scanning with resolution off: the list may change, resolution may not be turned on (§7.8.44).
        expectCommandComplete(controller, .raw(opcode: .leSetScanParameters, parameters: [0x00, 0x10, 0x00, 0x10, 0x00, 0x01, 0x00]))
        expectCommandComplete(controller, .raw(opcode: .leSetScanEnable, parameters: [0x01, 0x00]))
        #expect(Self.status(controller, Self.add(2)) == 0x00)
        #expect(Self.status(controller, Self.enable) == 0x0C)
        expectCommandComplete(controller, .raw(opcode: .leSetScanEnable, parameters: [0x00, 0x00]))
        #expect(Self.status(controller, Self.enable) == 0x00)

        // Scanning with resolution on: neither the list nor resolution may change (§7.8.38, §7.8.40, §7.8.44).
        expectCommandComplete(controller, .raw(opcode: .leSetScanEnable, parameters: [0x01, 0x00]))
        #expect(Self.status(controller, .leClearResolvingList) == 0x0C)
        #expect(Self.status(controller, Self.add(3)) == 0x0C)
        #expect(Self.status(controller, HCICommand.leSetAddressResolutionEnable(LESetAddressResolutionEnable(enable: false))) == 0x0C)
        #expect(Self.status(controller, .leReadResolvingListSize) == 0x00, "reading the size is always allowed")
        expectCommandComplete(controller, .raw(opcode: .leSetScanEnable, parameters: [0x00, 0x00]))
        #expect(Self.status(controller, .leClearResolvingList) == 0x00)
    }
}
