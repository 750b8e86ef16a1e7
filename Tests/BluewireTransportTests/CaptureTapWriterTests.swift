import BluewireCore
import BluewireSnoop
import Foundation
import Glibc
import Testing

@testable import BluewireTransport

/// A controller stand-in: every packet sent is answered at once, before `send` returns, with a
/// Command Complete (vendor opcode 0xFC00) carrying the command's parameters, so that a test can pair
/// each answer with its command.
private final class AnsweringTransport: HCITransport {
    let inbound: HCIInboundPackets
    private let continuation: HCIInboundPackets.Continuation

    init() {
        (inbound, continuation) = HCIInboundPackets.makeStream()
    }

    func send(_ packet: HCIPacket) async throws(TransportError) {
        let parameters = packet.payload.dropFirst(3).prefix(3)
        continuation.yield(HCIPacket(type: .event, payload: [0x0E, 6, 0x01, 0x00, 0xFC] + parameters))
    }

    func close() async {
        continuation.finish()
    }
}

/// Vendor command 0xFC00 whose first three parameters name the sender and its sequence number.
private func taggedCommand(sender: UInt8, sequence: Int, padding: Int = 0) -> HCIPacket {
    HCIPacket(type: .command, payload: [0x00, 0xFC, UInt8(3 + padding), sender, UInt8(sequence >> 8), UInt8(sequence & 0xFF)]
        + [UInt8](repeating: 0xA5, count: padding))
}

/// The tag (sender, sequence) of a tagged command or of its answer.
private func tag(of packet: HCIPacket) -> [UInt8] {
    let payload = Array(packet.payload)
    return packet.type == .command ? Array(payload[3..<6]) : Array(payload[5..<8])
}

private func records(at path: String) throws -> [CaptureRecord] {
    let reader = try CaptureFileReader(path: path)
    var records: [CaptureRecord] = []
    while let record = try reader.next() { records.append(record) }
    return records
}

private func temporaryPath(_ suffix: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("tap-\(UUID().uuidString.prefix(8)).\(suffix)").path
}

/// A FIFO in place of the capture file, with its read end open (non-blocking, so that opening does
/// not wait) and nobody reading yet: once the pipe's buffer is full, every write(2) to it blocks,
/// as on a stuck file system.
private struct StuckFile {
    let path = temporaryPath("fifo")
    let reader: Int32

    init() throws {
        guard mkfifo(path, 0o600) == 0 else { throw CaptureFileError.cannotOpen(path: path, errno: errno) }
        reader = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard reader >= 0 else { throw CaptureFileError.cannotOpen(path: path, errno: errno) }
    }

    /// Reads everything until the writer closes its end, on a thread of its own, and returns it.
    func drain() async throws -> [UInt8] {
        let fd = reader
        let result = try await DedicatedThread.run { () -> [UInt8] in
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                bytes += buffer[0..<count]
            }
            return bytes
        }
        return result.get()
    }

    func remove() {
        _ = Glibc.close(reader)
        unlink(path)
    }
}

@Suite("Capture tap: the writer thread")
struct CaptureTapWriterTests {
    @Test("packets sent from several tasks and received at once are in the file in the order the tap saw them")
    func orderUnderConcurrentSendsAndReceives() async throws {
        let path = temporaryPath("btsnoop")
        defer { unlink(path) }
        let senders = 4, perSender = 300
        let tap = try CaptureTap(wrapping: AnsweringTransport(), path: path)
        let received: [HCIPacket] = try await withThrowingTaskGroup(of: [HCIPacket].self) { group in
            group.addTask {
                var iterator = tap.inbound.makeAsyncIterator()
                var received: [HCIPacket] = []
                while received.count < senders * perSender, let packet = try await iterator.next() {
                    received.append(packet)
                }
                return received
            }
            for sender in 0..<senders {
                group.addTask {
                    for sequence in 0..<perSender { try await tap.send(taggedCommand(sender: UInt8(sender), sequence: sequence)) }
                    return []
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        await tap.close()
        #expect(tap.captureError == nil)
        #expect(tap.droppedPackets == 0)
        #expect(received.count == senders * perSender)

        let file = try records(at: path)
        #expect(file.count == 2 * senders * perSender, "close() returned before every record was in the file")
        let packets = file.compactMap(\.packet)
        // Each sender's commands in its own order.
        for sender in 0..<senders {
            let sequences = packets.filter { $0.type == .command && tag(of: $0)[0] == sender }.map { Int(tag(of: $0)[1]) << 8 | Int(tag(of: $0)[2]) }
            #expect(sequences == Array(0..<perSender), "sender \(sender)'s commands are out of order in the file")
        }
        // The answers in the order the consumer received them.
        let answers = packets.filter { $0.type == .event }
        #expect(answers == received)
        // Every command before its answer (the answer exists only once `send` has recorded the command).
        var commandIndex: [[UInt8]: Int] = [:]
        for (index, packet) in packets.enumerated() where packet.type == .command { commandIndex[tag(of: packet)] = index }
        for (index, packet) in packets.enumerated() where packet.type == .event {
            let command = commandIndex[tag(of: packet)]
            #expect(command != nil && command! < index, "an answer precedes its command at record \(index)")
        }
    }

    @Test("sends return while the file cannot take bytes, and close() returns only once all of them are written",
          .timeLimit(.minutes(1)))
    func closeFlushesWhatTheStuckFileCouldNotTake() async throws {
        let fifo = try StuckFile()
        defer { fifo.remove() }
        let count = 800
        let tap = try CaptureTap(wrapping: AnsweringTransport(), path: fifo.path)
        // 800 × 250 octets: far more than the pipe (64 KiB) and the writer's buffer hold, so the
        // writer thread is stuck in write(2) before the last send returns; the sends do not wait.
        for sequence in 0..<count { try await tap.send(taggedCommand(sender: 0, sequence: sequence, padding: 247)) }
        #expect(tap.captureError == nil)

        async let drained = fifo.drain()
        await tap.close()
        let bytes = try await drained
        let copy = temporaryPath("btsnoop")
        defer { unlink(copy) }
        #expect(FileManager.default.createFile(atPath: copy, contents: Data(bytes)))
        let packets = try records(at: copy).compactMap(\.packet)
        #expect(packets.map { Int(tag(of: $0)[1]) << 8 | Int(tag(of: $0)[2]) } == Array(0..<count))
        #expect(tap.captureError == nil && tap.droppedPackets == 0)
    }

    @Test("a stuck file holds at most maximumQueuedBytes in the tap; what did not fit is counted as dropped",
          .timeLimit(.minutes(1)))
    func boundedQueueCountsDrops() async throws {
        let fifo = try StuckFile()
        defer { fifo.remove() }
        let count = 10_000
        let tap = try CaptureTap(wrapping: AnsweringTransport(), path: fifo.path, maximumQueuedBytes: 64 * 1024)
        // 10 000 × 260 octets ≈ 2.6 MB against 64 KiB of pipe, 64 KiB of writer buffer and 64 KiB of queue.
        for sequence in 0..<count { try await tap.send(taggedCommand(sender: 0, sequence: sequence, padding: 250)) }
        let dropped = tap.droppedPackets
        #expect(dropped > 0, "the queue grew past its bound instead of dropping")

        async let drained = fifo.drain()
        await tap.close()
        let bytes = try await drained
        let copy = temporaryPath("btsnoop")
        defer { unlink(copy) }
        #expect(FileManager.default.createFile(atPath: copy, contents: Data(bytes)))
        let file = try records(at: copy)
        #expect(file.count + dropped == count, "every packet is either in the file or counted as dropped")
        // The cumulative drops field never decreases and, on the last record, says how many were lost before it.
        #expect(zip(file, file.dropFirst()).allSatisfy { $0.drops <= $1.drops })
        #expect(Int(file.last?.drops ?? 0) <= dropped)
        #expect(tap.captureError == nil)
    }

    @Test("a capture that cannot be written keeps its first error and never disturbs the transport")
    func writeErrorIsKeptAndTheTransportKeepsWorking() async throws {
        let tap = try CaptureTap(wrapping: AnsweringTransport(), path: "/dev/full")
        var iterator = tap.inbound.makeAsyncIterator()
        for sequence in 0..<1000 {
            try await tap.send(taggedCommand(sender: 0, sequence: sequence, padding: 200))
            let answer = try await iterator.next()
            #expect(answer.map(tag) == [0, UInt8(sequence >> 8), UInt8(sequence & 0xFF)])
        }
        await tap.flush()
        await tap.close()
        #expect(tap.captureError == .writeFailed(path: "/dev/full", errno: ENOSPC))
    }
}
