import Foundation
import Glibc
import Synchronization
import PeerTestSupport

/// A TCP listener on 127.0.0.1 (free port) that plays a scripted HCI controller for one client: it
/// reads H4 command packets and answers each as `script` says (Command Complete with given return
/// parameters, raw bytes such as garbage, or nothing).
///
/// A fake, on purpose: the faults it produces (silence, an error status on Reset, a corrupt byte
/// stream) are ones bumble's controller cannot be made to produce.
final class ScriptedControllerServer: Sendable {
    enum Reply: Sendable {
        /// Command Complete (Core Vol 4 Part E §7.7.14) with these return parameters (status first).
        case complete([UInt8])
        /// These bytes as they are (garbage, or several events).
        case raw([UInt8])
        /// No answer at all (what bumble does for vendor commands).
        case silence
    }

    /// Command credits granted in every Command Complete: more than one, so that a command left
    /// unanswered does not hold back the ones after it.
    static let credits: UInt8 = 4

    let port: UInt16
    private let listener: Int32
    private let listenerClosed = Mutex(false)
    /// Opcodes received, in order.
    private let received = Mutex<[UInt16]>([])
    /// Tasks in `waitForOpcode`, resumed by the thread that reads the command.
    private let opcodeWaiters = Mutex<[(opcode: UInt16, continuation: CheckedContinuation<Void, Never>)]>([])

    /// `script` is called on the server's thread with each command's opcode and parameters.
    init(_ script: @escaping @Sendable (_ opcode: UInt16, _ parameters: [UInt8]) -> Reply) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        self.listener = listener
        guard listener >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bind(listener, sa, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, sa, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in
            let client = accept(listener, nil, nil)
            // Only this thread closes the listener (see ScriptedStreamServer for why).
            listenerClosed.withLock { closed in
                close(listener)
                closed = true
            }
            guard client >= 0 else { return }
            serve(client, script)
            close(client)
        }
    }

    var transport: String { "tcp:127.0.0.1:\(port)" }

    var receivedOpcodes: [UInt16] { received.withLock { $0 } }

    /// Returns once a command with `opcode` has been read off the socket (at once if it has): the
    /// server's reading thread resumes the waiter as it records the opcode.
    func waitForOpcode(_ opcode: UInt16) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let seen = opcodeWaiters.withLock { waiters in
                if received.withLock({ $0.contains(opcode) }) { return true }
                waiters.append((opcode, continuation))
                return false
            }
            if seen { continuation.resume() }
        }
    }

    func stop() {
        listenerClosed.withLock { closed in
            if !closed { shutdown(listener, Int32(SHUT_RDWR)) }
        }
    }

    private func serve(_ client: Int32, _ script: (UInt16, [UInt8]) -> Reply) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            if count <= 0 { return }
            pending += buffer[0..<count]
            // H4 command: 0x01, opcode (LE u16), parameter length (u8), parameters.
            while pending.count >= 4, pending[0] == 0x01, pending.count >= 4 + Int(pending[3]) {
                let opcode = UInt16(pending[1]) | UInt16(pending[2]) << 8
                let parameters = Array(pending[4..<(4 + Int(pending[3]))])
                pending.removeFirst(4 + Int(pending[3]))
                let ready = opcodeWaiters.withLock { waiters in
                    received.withLock { $0.append(opcode) }
                    let ready = waiters.filter { $0.opcode == opcode }.map(\.continuation)
                    waiters.removeAll { $0.opcode == opcode }
                    return ready
                }
                for waiter in ready { waiter.resume() }
                let bytes: [UInt8]
                switch script(opcode, parameters) {
                case .complete(let returnParameters):
                    let event = [Self.credits, UInt8(opcode & 0xFF), UInt8(opcode >> 8)] + returnParameters
                    bytes = [0x04, 0x0E, UInt8(event.count)] + event
                case .raw(let raw):
                    bytes = raw
                case .silence:
                    continue
                }
                _ = bytes.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            }
            if let first = pending.first, first != 0x01 { return }
        }
    }

    /// Return parameters of a small LE-only controller (HCI 5.0, no extended advertising), enough
    /// for `ControllerBringUp` to finish; every other command gets a bare success status.
    static func bringUpAnswer(_ opcode: UInt16) -> Reply {
        switch opcode {
        case 0x1001:  // Read Local Version Information
            return .complete([0x00, 0x09, 0x00, 0x00, 0x09, 0xFF, 0xFF, 0x00, 0x00])
        case 0x1002:  // Read Local Supported Commands (none advertised: v1 LE buffer size is used)
            return .complete([0x00] + [UInt8](repeating: 0, count: 64))
        case 0x1003:  // Read Local Supported Features: LE Supported (Controller)
            return .complete([0x00, 0, 0, 0, 0, 0x40, 0, 0, 0])
        case 0x1009:  // Read BD_ADDR
            return .complete([0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11])
        case 0x2003:  // LE Read Local Supported Features
            return .complete([0x00] + [UInt8](repeating: 0, count: 8))
        case 0x2002:  // LE Read Buffer Size: 27 bytes × 8
            return .complete([0x00, 27, 0, 8])
        default:
            return .complete([0x00])
        }
    }
}
