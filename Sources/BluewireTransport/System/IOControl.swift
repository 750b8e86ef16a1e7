import CBluetooth
import Glibc

extension FileDescriptor {
    /// `HCIDEVDOWN` is `_IOW('H', 202, int)`; function-like macros do not import into Swift.
    static let hciDeviceDownRequest: UInt = 0x4004_48CA

    /// ioctl(2) HCIDEVDOWN: takes the device down so that a user-channel bind can claim it
    /// (the kernel refuses HCI_CHANNEL_USER on a device that is up).
    func hciDeviceDown(device: UInt16) throws(SystemCallError) {
        _ = try retryingOnInterrupt("ioctl(HCIDEVDOWN, hci\(device))") {
            bluewire_ioctl_int(rawValue, FileDescriptor.hciDeviceDownRequest, Int32(device))
        }
    }
}
