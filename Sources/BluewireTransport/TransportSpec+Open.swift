extension TransportSpec {
    /// Opens the transport. Connecting and opening block, so they run on a thread of their own.
    ///
    /// `replay:` throws `.unsupported`: the replay transport lives in BluewireTesting, which opens it.
    public func open() async throws(TransportError) -> any HCITransport {
        switch self {
        case .hciUserChannel(let device):
            return try await HCIUserChannel.open(device: device)
        case .tcp(let host, let port):
            return try await StreamTransports.openTCP(host: host, port: port)
        case .unix(let path):
            return try await StreamTransports.openUnix(path: path)
        case .serial(let path, let baudRate, let flow):
            return try await StreamTransports.openSerial(path: path, baudRate: baudRate, hardwareFlowControl: flow)
        case .replay(let path):
            throw .unsupported("replay:\(path) is opened by BluewireTesting's replay transport")
        }
    }
}
