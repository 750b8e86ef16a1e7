import BluewireCore
import BluewireHostEngine
import BluewireSnoop
import Foundation

/// Runs a `HostEngine` over a TCP connection to an H4 controller (a bumble controller): the I/O
/// loop a real host would have, in a test. Blocking `poll` with a short timeout, then the engine's
/// deadline: the only waiting is for the peer.
final class SocketEngineRunner {
    var engine: HostEngine
    let fd: Int32
    var buffer: [UInt8] = []
    var completions: [(HostRequestID, Result<HostCompletion, HostEngineError>)] = []
    var events: [HostEngineEvent] = []
    var packetsIn = 0
    var packetsOut = 0
    /// Every packet that crossed the socket, in order, for a btsnoop capture of the session (`btsnoop(from:)`).
    var recorded: [(direction: PacketDirection, packet: HCIPacket, time: MonotonicInstant)] = []
    let start = ContinuousClock.now

    struct SocketError: Error, CustomStringConvertible { var description: String }

    /// `transport` is spelled `tcp:HOST:PORT`.
    init(transport: String, configuration: HostEngineConfiguration) throws {
        let parts = transport.split(separator: ":")
        guard parts.count == 3, parts[0] == "tcp", let port = UInt16(parts[2]) else {
            throw SocketError(description: "not a tcp transport: \(transport)")
        }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError(description: "socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr(String(parts[1]))
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw SocketError(description: "connect \(transport): \(errno)")
        }
        self.fd = fd
        engine = HostEngine(configuration: configuration)
    }

    deinit { close(fd) }

    var now: MonotonicInstant {
        let elapsed = ContinuousClock.now - start
        let (seconds, attoseconds) = elapsed.components
        return MonotonicInstant(microseconds: 1_000_000 + seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
    }

    func perform(_ request: HostRequest, id: UInt32) {
        engine.perform(request, id: HostRequestID(id), now: now)
        flush()
    }

    func flush() {
        while let output = engine.nextOutput() {
            switch output {
            case .send(let packet):
                let bytes = [packet.type.rawValue] + Array(packet.payload)
                var offset = 0
                while offset < bytes.count {
                    let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                    if written <= 0 { return }
                    offset += written
                }
                packetsOut += 1
                recorded.append((.hostToController, packet, now))
            case .completed(let id, let result): completions.append((id, result))
            case .event(let event): events.append(event)
            }
        }
    }

    /// One H4 packet from the buffer, if whole (event: 2-octet header; ACL: 4-octet header).
    func nextPacket() -> HCIPacket? {
        guard let type = buffer.first else { return nil }
        let header: Int
        let length: Int
        switch type {
        case HCIPacketType.event.rawValue:
            header = 2
            guard buffer.count >= 1 + header else { return nil }
            length = Int(buffer[2])
        case HCIPacketType.acl.rawValue:
            header = 4
            guard buffer.count >= 1 + header else { return nil }
            length = Int(buffer[3]) | Int(buffer[4]) << 8
        default:
            buffer.removeAll()
            return nil
        }
        guard buffer.count >= 1 + header + length else { return nil }
        let packet = HCIPacket(type: type == HCIPacketType.event.rawValue ? .event : .acl, payload: Array(buffer[1..<(1 + header + length)]))
        buffer.removeFirst(1 + header + length)
        return packet
    }

    /// Runs the I/O loop until `condition` holds or `seconds` pass; true if it held.
    @discardableResult
    func run(seconds: Double, until condition: (SocketEngineRunner) -> Bool) -> Bool {
        let limit = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while ContinuousClock.now < limit {
            if condition(self) { return true }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            var timeout: Int32 = 20
            if let deadline = engine.nextDeadline {
                timeout = Int32(max(0, min(20, (deadline.microseconds - now.microseconds) / 1000)))
            }
            if poll(&descriptor, 1, timeout) > 0 {
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count <= 0 { return condition(self) }
                buffer += chunk[0..<count]
                while let packet = nextPacket() {
                    packetsIn += 1
                    recorded.append((.controllerToHost, packet, now))
                    engine.receive(packet, now: now)
                    flush()
                }
            }
            engine.advanceTime(to: now)
            flush()
        }
        return condition(self)
    }

    /// The session's recorded packets `index..<end` (to the last one by default), as a btsnoop file (`BTSnoopWriter`).
    func btsnoop(from index: Int = 0, to end: Int? = nil) -> [UInt8] {
        let writer = BTSnoopWriter()
        var bytes = writer.fileHeader
        for record in recorded[index..<(end ?? recorded.count)] {
            writer.appendRecord(
                record.packet, direction: record.direction,
                timestamp: BTSnoopWriter.timestamp(unixMicroseconds: record.time.microseconds), to: &bytes)
        }
        return bytes
    }

    func result(_ id: UInt32) -> Result<HostCompletion, HostEngineError>? {
        completions.first { $0.0 == HostRequestID(id) }?.1
    }
}

/// EVENT lines of the bumble peer, collected as they come.
final class PeerEventLog: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [[String: Any]] = []

    func append(_ line: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { return }
        lock.lock()
        lines.append(object)
        lock.unlock()
    }

    var all: [[String: Any]] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }

    func first(_ key: String) -> [String: Any]? { all.first { $0[key] != nil } }
}
