import BluewireCore
import BluewireTesting
import Foundation
import Glibc
import Synchronization

/// Serves a `VirtualController` as an H4 byte stream on a Unix socket, so that a Host reaches it
/// through Bluewire's own stream transport (`unix:PATH`): its I/O loop, its H4 framer, its errors.
///
/// The controller and the link behind it are the real virtual ones; the one thing made up is the
/// cut (`cutNextPacket`): the stream ends inside a packet, as when a UART is unplugged or a
/// controller process dies mid-write. Neither the virtual controller nor bumble can be made to do
/// that, so here it is a fake, on purpose.
final class VirtualControllerStreamBridge: Sendable {
    private struct State {
        /// Open descriptors, closed only under the lock: another test's socket may get a closed
        /// descriptor's number, and `stop` must never shut that one down.
        var listener: Int32?
        var client: Int32?
        /// Cut the next controller packet of this type after this many bytes of its H4 form.
        var cut: (type: HCIPacketType, keep: Int)?
        var ended = false
    }

    let path: String
    private let controller: VirtualController
    private let state = Mutex(State())

    init(controller: VirtualController) throws {
        self.controller = controller
        path = NSTemporaryDirectory() + "bluewire-bridge-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        state.withLock { $0.listener = listener }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw POSIXError(.ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bind(listener, sa, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 && listen(listener, 1) == 0
            }
        }
        guard bound else {
            let code = errno
            close(listener)
            state.withLock { $0.listener = nil }
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        Thread.detachNewThread { [self] in serve(listener) }
    }

    var transport: String { "unix:\(path)" }

    /// The next packet of `type` the controller sends reaches the host cut after `keep` bytes of its
    /// H4 form (packet indicator included); then the stream ends.
    func cutNextPacket(ofType type: HCIPacketType, keepingBytes keep: Int) {
        state.withLock { $0.cut = (type, keep) }
    }

    /// Whether the stream has been cut.
    var hasEnded: Bool { state.withLock { $0.ended } }

    func stop() {
        state.withLock { state in
            state.ended = true
            if let listener = state.listener { shutdown(listener, Int32(SHUT_RDWR)) }
            if let client = state.client { shutdown(client, Int32(SHUT_RDWR)) }
        }
        unlink(path)
    }

    private func serve(_ listener: Int32) {
        let client = accept(listener, nil, nil)
        state.withLock { state in
            close(listener)
            state.listener = nil
            if client >= 0 { state.client = client }
        }
        guard client >= 0 else { return }
        // Runs with the link locked (so never twice at once): a plain blocking write is fine.
        controller.setOutputHandler { [self] packet in
            var bytes = packet.h4Bytes
            let proceed = state.withLock { state -> Bool in
                guard !state.ended else { return false }
                if let cut = state.cut, cut.type == packet.type {
                    bytes = Array(bytes.prefix(cut.keep))
                    state.ended = true
                }
                return true
            }
            guard proceed else { return }
            Self.writeAll(client, bytes)
            if hasEnded { shutdown(client, Int32(SHUT_RDWR)) }
        }
        readPackets(client)
        controller.setOutputHandler(nil)
        state.withLock { state in
            close(client)
            state.client = nil
        }
    }

    /// H4 from the host (commands and ACL data) into the controller, until the stream ends.
    private func readPackets(_ client: Int32) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !hasEnded {
            let count = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            pending += buffer[0..<count]
            while let (packet, length) = Self.nextPacket(pending) {
                pending.removeFirst(length)
                controller.receive(hostPacket: packet)
            }
        }
    }

    /// The first whole H4 packet in `bytes` and its length, if there is one.
    private static func nextPacket(_ bytes: [UInt8]) -> (HCIPacket, Int)? {
        guard let indicator = bytes.first else { return nil }
        let header: Int, length: Int
        switch indicator {
        case HCIPacketType.command.rawValue:
            guard bytes.count >= 4 else { return nil }
            header = 4
            length = Int(bytes[3])
        case HCIPacketType.acl.rawValue:
            guard bytes.count >= 5 else { return nil }
            header = 5
            length = Int(bytes[3]) | Int(bytes[4]) << 8
        default:
            return nil
        }
        guard bytes.count >= header + length, let type = HCIPacketType(rawValue: indicator) else { return nil }
        return (HCIPacket(type: type, payload: Array(bytes[1..<(header + length)])), header + length)
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written > 0 else { return }
            offset += written
        }
    }
}
