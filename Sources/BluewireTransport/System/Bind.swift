import CBluetooth
import Glibc

extension FileDescriptor {
    /// bind(2) to `{AF_BLUETOOTH, device, channel}`. With `HCI_CHANNEL_USER` the kernel gives this
    /// socket exclusive raw access to the controller; it fails with EBUSY unless the device is down.
    func bindHCI(device: UInt16, channel: UInt16) throws(SystemCallError) {
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = device
        address.hci_channel = channel
        _ = try withUnsafePointer(to: &address) { pointer throws(SystemCallError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (sa) throws(SystemCallError) in
                try retryingOnInterrupt("bind(hci\(device))") {
                    Glibc.bind(rawValue, sa, socklen_t(MemoryLayout<sockaddr_hci>.size))
                }
            }
        }
    }
}
