import Glibc

/// What `--transport` (or `BLUEWIRE_TRANSPORT`) names: which controller to talk to and how.
///
/// Spellings: `hci0` (HCI user channel on hci0), `tcp:HOST:PORT`, `unix:PATH`,
/// `serial:PATH[:BAUD][:rtscts]` (H4 over a UART or pty; 115200 baud, no flow control by default),
/// `replay:FILE` (a capture acting as the controller; opened by BluewireTesting).
public enum TransportSpec: Hashable, Sendable, CustomStringConvertible {
    case hciUserChannel(device: UInt16)
    case tcp(host: String, port: UInt16)
    case unix(path: String)
    case serial(path: String, baudRate: Int, hardwareFlowControl: Bool)
    case replay(path: String)

    /// The environment variable that gives the default transport.
    public static let environmentVariable = "BLUEWIRE_TRANSPORT"
    /// Baud rate when a `serial:` spec gives none.
    public static let defaultBaudRate = 115_200

    /// Parses one of the spellings above.
    public init(parsing text: String) throws(TransportError) {
        if text.hasPrefix("hci"), let index = UInt16(text.dropFirst(3)), index != UInt16.max {
            self = .hciUserChannel(device: index)
            return
        }
        guard let colon = text.firstIndex(of: ":") else {
            throw .invalidSpec("'\(text)': expected hciN, tcp:HOST:PORT, unix:PATH, serial:PATH[:BAUD][:rtscts] or replay:FILE")
        }
        let scheme = text[..<colon]
        let rest = String(text[text.index(after: colon)...])
        switch scheme {
        case "tcp":
            guard let portColon = rest.lastIndex(of: ":") else { throw .invalidSpec("'\(text)': expected tcp:HOST:PORT") }
            var host = String(rest[..<portColon])
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty, let port = UInt16(rest[rest.index(after: portColon)...]), port != 0 else {
                throw .invalidSpec("'\(text)': expected tcp:HOST:PORT with a port from 1 to 65535")
            }
            self = .tcp(host: host, port: port)
        case "unix":
            guard !rest.isEmpty else { throw .invalidSpec("'\(text)': expected unix:PATH") }
            self = .unix(path: rest)
        case "serial":
            var parts = rest.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            var flowControl = false
            var baudRate = TransportSpec.defaultBaudRate
            if parts.count > 1, parts.last == "rtscts" {
                flowControl = true
                parts.removeLast()
            }
            if parts.count > 1, let last = parts.last, let rate = Int(last) {
                guard FileDescriptor.speed(forBaudRate: rate) != nil else {
                    throw .invalidSpec("'\(text)': unsupported baud rate \(rate)")
                }
                baudRate = rate
                parts.removeLast()
            }
            let path = parts.joined(separator: ":")
            guard !path.isEmpty else { throw .invalidSpec("'\(text)': expected serial:PATH[:BAUD][:rtscts]") }
            self = .serial(path: path, baudRate: baudRate, hardwareFlowControl: flowControl)
        case "replay":
            guard !rest.isEmpty else { throw .invalidSpec("'\(text)': expected replay:FILE") }
            self = .replay(path: rest)
        default:
            throw .invalidSpec("'\(text)': unknown kind '\(scheme)' (hciN, tcp, unix, serial, replay)")
        }
    }

    /// The transport named by `option` (a `--transport` value) or else by `BLUEWIRE_TRANSPORT`.
    public static func resolve(_ option: String?) throws(TransportError) -> TransportSpec {
        if let option { return try TransportSpec(parsing: option) }
        if let value = getenv(environmentVariable), value.pointee != 0 {
            return try TransportSpec(parsing: String(cString: value))
        }
        throw .invalidSpec("no transport given: use --transport or set \(environmentVariable)")
    }

    public var description: String {
        switch self {
        case .hciUserChannel(let device): "hci\(device)"
        case .tcp(let host, let port): host.contains(":") ? "tcp:[\(host)]:\(port)" : "tcp:\(host):\(port)"
        case .unix(let path): "unix:\(path)"
        case .serial(let path, let baudRate, let flow): "serial:\(path):\(baudRate)" + (flow ? ":rtscts" : "")
        case .replay(let path): "replay:\(path)"
        }
    }
}
