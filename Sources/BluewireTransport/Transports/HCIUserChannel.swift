import CBluetooth
import Glibc

/// The Linux HCI user channel: exclusive raw access to a local controller through the kernel's
/// Bluetooth socket, with no bluetoothd and no kernel host stack in the way.
///
/// Opening takes the device down (HCIDEVDOWN: the kernel refuses the user channel on a device that
/// is up), then binds `{AF_BLUETOOTH, hciN, HCI_CHANNEL_USER}`. The kernel hands over one H4 packet
/// per read, so no framer is involved. Needs CAP_NET_ADMIN.
enum HCIUserChannel {
    static func open(device: UInt16) async throws(TransportError) -> any HCITransport {
        let name = "hci\(device)"
        let descriptor = try await DedicatedThread.run { () throws(TransportError) in
            try openDescriptor(device: device, name: name)
        }.get()
        return try DescriptorTransport(descriptor: descriptor, isSocket: true, framing: .packetPerRead)
    }

    static func openDescriptor(device: UInt16, name: String) throws(TransportError) -> FileDescriptor {
        let fd: FileDescriptor
        do throws(SystemCallError) {
            fd = try FileDescriptor.socket(
                domain: AF_BLUETOOTH,
                type: Int32(SOCK_RAW.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue),
                protocol: BTPROTO_HCI)
        } catch {
            throw error.errno == .addressFamilyNotSupported || error.errno == .protocolNotSupported
                ? .bluetoothUnavailable : map(error, name: name)
        }
        do throws(SystemCallError) {
            try fd.hciDeviceDown(device: device)
            try fd.bindHCI(device: device, channel: UInt16(HCI_CHANNEL_USER))
        } catch {
            try? fd.close()
            throw map(error, name: name)
        }
        return fd
    }

    static func map(_ error: SystemCallError, name: String) -> TransportError {
        switch error.errno {
        case .noSuchDevice: .noSuchDevice(name)
        case .deviceBusy, .alreadyInProgress: .deviceBusy(name)
        case .permissionDenied, .accessDenied: .permissionDenied("\(name) (the HCI user channel needs CAP_NET_ADMIN)")
        case .addressFamilyNotSupported: .bluetoothUnavailable
        default: .system(error)
        }
    }
}
