/// Why a transport could not be opened, could not send, or stopped delivering packets.
public enum TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kernel has no Bluetooth sockets (socket(AF_BLUETOOTH) failed with EAFNOSUPPORT).
    case bluetoothUnavailable
    /// No such controller (`hci3` when there are two) or no such device file.
    case noSuchDevice(String)
    /// The controller cannot be claimed (EBUSY/EALREADY): bluetoothd or another user channel holds it,
    /// or the kernel has not finished (or failed) its own setup of the device; see `dmesg`.
    case deviceBusy(String)
    /// Not allowed: the HCI user channel needs CAP_NET_ADMIN; a tty needs read/write permission.
    case permissionDenied(String)
    /// Any other failed system call, with its name and errno.
    case system(SystemCallError)
    /// The controller's byte stream is not valid H4, or it ended inside a packet.
    case framing(H4FramingError)
    /// The transport is closed: `close()` was called, or the stream ended or failed earlier.
    case closed
    /// A `--transport` string that does not parse.
    case invalidSpec(String)
    /// A transport kind this module cannot open (`replay:` is opened by BluewireTesting).
    case unsupported(String)
    /// A replayed capture and the host driving it disagree (the replay transport in BluewireTesting).
    case replay(ReplayMismatch)

    public var description: String {
        switch self {
        case .bluetoothUnavailable: "this kernel has no Bluetooth support (AF_BLUETOOTH sockets unavailable)"
        case .noSuchDevice(let name): "no such device: \(name)"
        case .deviceBusy(let name): "\(name) is busy (held by bluetoothd or another program, or still in kernel setup: see dmesg)"
        case .permissionDenied(let what): "permission denied: \(what)"
        case .system(let error): error.description
        case .framing(let error): error.description
        case .closed: "the transport is closed"
        case .invalidSpec(let text): "invalid transport: \(text)"
        case .unsupported(let text): "unsupported transport: \(text)"
        case .replay(let mismatch): mismatch.description
        }
    }
}
