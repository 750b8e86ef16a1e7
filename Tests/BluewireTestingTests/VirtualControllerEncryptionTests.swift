import BluewireCore
import BluewireHCI
import BluewireTesting
import Testing

/// The virtual controller's link-layer encryption handshake (Core Vol 6 Part B §5.1.3, Vol 4 Part E
/// §7.8.24-26): what each host sees, byte for byte, on a connected pair (handle 0x0040 both sides).
@Suite("VirtualController encryption")
struct VirtualControllerEncryptionTests {
    static let key = (0..<16).map { UInt8($0) }

    static func enable(_ scene: AdvertisingScene, key: [UInt8] = key) -> [String] {
        hexLines(scene.central.receive(hostPacket: HCICommand.leEnableEncryption(LEEnableEncryption(
            connectionHandle: 0x40, randomNumber: 0x0807_0605_0403_0201, encryptedDiversifier: 0xBEEF, longTermKey: key)).packet))
    }

    static func reply(_ scene: AdvertisingScene, key: [UInt8]) -> [String] {
        hexLines(scene.peripheral.receive(hostPacket: HCICommand.leLongTermKeyRequestReply(
            LELongTermKeyRequestReply(connectionHandle: 0x40, longTermKey: key)).packet))
    }

    @Test("Enable Encryption → LTK Request with the same Rand and EDIV → the right key: Encryption Change on both; again: Key Refresh")
    func encrypts() {
        let scene = AdvertisingScene.connected()
        #expect(Self.enable(scene) == ["04 0f 04 00 01 19 20"])
        #expect(hexLines(scene.peripheral.takeOutput()) == ["04 3e 0d 05 40 00 01 02 03 04 05 06 07 08 ef be"])
        #expect(Self.reply(scene, key: Self.key) == ["04 0e 06 01 1a 20 00 40 00", "04 08 04 00 40 00 01"])
        #expect(hexLines(scene.central.takeOutput()) == ["04 08 04 00 40 00 01"])
        // A second start on an encrypted link is a key refresh (§7.7.39), an event the default mask
        // leaves out (bit 47): the hosts unmask it as Bluewire's bring-up does.
        for controller in [scene.central, scene.peripheral] {
            let mask = EventMask(rawValue: 0x0000_1FFF_FFFF_FFFF | (1 << 47) | (1 << 61))
            _ = controller.receive(hostPacket: HCICommand.setEventMask(mask).packet)
        }
        _ = Self.enable(scene)
        _ = scene.peripheral.takeOutput()
        #expect(Self.reply(scene, key: Self.key) == ["04 0e 06 01 1a 20 00 40 00", "04 30 03 00 40 00"])
        #expect(hexLines(scene.central.takeOutput()) == ["04 30 03 00 40 00"])
    }

    @Test("a negative reply: the central gets Encryption Change with PIN or Key Missing; a wrong key: both do")
    func refused() {
        let scene = AdvertisingScene.connected()
        _ = Self.enable(scene)
        _ = scene.peripheral.takeOutput()
        let negative = hexLines(scene.peripheral.receive(hostPacket: HCICommand.leLongTermKeyRequestNegativeReply(
            ConnectionHandleParameter(connectionHandle: 0x40)).packet))
        #expect(negative == ["04 0e 06 01 1b 20 00 40 00"])
        #expect(hexLines(scene.central.takeOutput()) == ["04 08 04 06 40 00 00"])
        _ = Self.enable(scene)
        _ = scene.peripheral.takeOutput()
        #expect(Self.reply(scene, key: Array(repeating: 0xFF, count: 16)) == ["04 0e 06 01 1a 20 00 40 00", "04 08 04 06 40 00 00"])
        #expect(hexLines(scene.central.takeOutput()) == ["04 08 04 06 40 00 00"])
    }

    @Test("Enable Encryption from the peripheral is Command Disallowed; a reply with no request is too")
    func disallowed() {
        let scene = AdvertisingScene.connected()
        let fromPeripheral = hexLines(scene.peripheral.receive(hostPacket: HCICommand.leEnableEncryption(LEEnableEncryption(
            connectionHandle: 0x40, randomNumber: 0, encryptedDiversifier: 0, longTermKey: Self.key)).packet))
        #expect(fromPeripheral == ["04 0f 04 0c 01 19 20"])
        #expect(Self.reply(scene, key: Self.key) == ["04 0e 06 01 1a 20 0c 40 00"])
    }
}
