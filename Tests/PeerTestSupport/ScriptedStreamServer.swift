import Foundation
import Glibc
import Synchronization

/// A TCP listener on 127.0.0.1 (free port) that accepts one client and then does what it is told:
/// stay silent, or send given bytes and hang up. For transport behaviours bumble cannot produce.
public final class ScriptedStreamServer: Sendable {
    public enum Behaviour: Sendable {
        /// Accept and never answer (keeps the connection open until `stop`).
        case silent
        /// Send these bytes, then end the stream (and close once the client has hung up).
        case sendThenClose([UInt8])
        /// Read nothing until `startReading()`, so the client's writes fill the kernel's buffers;
        /// then read everything until the client hangs up (`received`).
        case stalledReader
    }

    public let port: UInt16
    private let listener: Int32
    /// Whether the accepting thread has closed `listener` (after which its number may be reused).
    private let listenerClosed = Mutex(false)
    private let readGate = DispatchSemaphore(value: 0)
    private let bytesRead = Mutex<[UInt8]>([])
    private let readerDone = DispatchSemaphore(value: 0)

    public init(_ behaviour: Behaviour) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        self.listener = listener
        guard listener >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bind(listener, sa, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, sa, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        let port = UInt16(bigEndian: address.sin_port)
        let listenerDescriptor = listener
        self.port = port
        Thread.detachNewThread { [self] in
            let client = accept(listenerDescriptor, nil, nil)
            // Only this thread closes the listener, and `stop` touches it only while it is open:
            // otherwise another test's socket could get the number and be shut down or accepted on.
            listenerClosed.withLock { closed in
                close(listenerDescriptor)
                closed = true
            }
            guard client >= 0 else { return }
            switch behaviour {
            case .silent:
                // Hold the connection until the client hangs up.
                var byte: UInt8 = 0
                while read(client, &byte, 1) > 0 {}
            case .sendThenClose(let bytes):
                _ = bytes.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
                // The end of the stream right after the bytes (FIN), then read what the client sent
                // until it hangs up: closing with its bytes unread would make TCP reset the
                // connection instead, and the client could see "connection reset" before it had
                // read our bytes, depending on timing.
                shutdown(client, Int32(SHUT_WR))
                var buffer = [UInt8](repeating: 0, count: 4096)
                while buffer.withUnsafeMutableBytes({ read(client, $0.baseAddress, $0.count) }) > 0 {}
            case .stalledReader:
                readGate.wait()
                var buffer = [UInt8](repeating: 0, count: 64 * 1024)
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
                    guard count > 0 else { break }
                    bytesRead.withLock { $0 += buffer[0..<count] }
                }
                readerDone.signal()
            }
            close(client)
        }
    }

    public var transport: String { "tcp:127.0.0.1:\(port)" }

    /// `.stalledReader`: starts reading.
    public func startReading() { readGate.signal() }

    /// `.stalledReader`: everything read, once the client has hung up (blocks until then).
    public func received() -> [UInt8] {
        readerDone.wait()
        return bytesRead.withLock { $0 }
    }

    /// Stops listening (a pending accept fails; the accepting thread then closes the socket).
    public func stop() {
        listenerClosed.withLock { closed in
            if !closed { shutdown(listener, Int32(SHUT_RDWR)) }
        }
    }
}
