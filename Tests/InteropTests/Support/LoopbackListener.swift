import Foundation

/// A TCP socket listening on a loopback port for as long as the value lives: a port "in use".
final class LoopbackListener {
    let port: UInt16
    private let descriptor: Int32

    /// `port` 0 takes a free one.
    init(port: UInt16) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let descriptor = self.descriptor
        let ok = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bind(descriptor, sa, length) == 0 && listen(descriptor, 1) == 0 && getsockname(descriptor, sa, &length) == 0
            }
        }
        guard ok else {
            close(descriptor)
            throw ProcessRunner.Failure(description: "cannot listen on 127.0.0.1:\(port): errno \(errno)")
        }
        self.port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(descriptor) }
}
