import BluewireCore

/// Addresses for virtual controllers in tests: public ones (an OUI-like prefix 00:1B:DC) and static random
/// ones (top two bits 11, as Core Vol 6 Part B §1.3.2.1 requires), one of each for a central, a
/// peripheral and a third device, so that a failure message names the role by its address.
public enum VirtualAddress {
    public static let centralPublic = BluetoothAddress(0x00, 0x1B, 0xDC, 0x00, 0x00, 0x01)
    public static let peripheralPublic = BluetoothAddress(0x00, 0x1B, 0xDC, 0x00, 0x00, 0x02)
    public static let thirdPublic = BluetoothAddress(0x00, 0x1B, 0xDC, 0x00, 0x00, 0x03)
    public static let centralRandom = BluetoothAddress(0xC1, 0x00, 0x00, 0x00, 0x00, 0x01, type: .random)
    public static let peripheralRandom = BluetoothAddress(0xC2, 0x00, 0x00, 0x00, 0x00, 0x02, type: .random)
    public static let thirdRandom = BluetoothAddress(0xC3, 0x00, 0x00, 0x00, 0x00, 0x03, type: .random)
}
