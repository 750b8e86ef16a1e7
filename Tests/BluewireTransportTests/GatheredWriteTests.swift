import Glibc
import Testing

@testable import BluewireTransport

/// `FileDescriptor.write(header:body:from:isSocket:)`, the descriptor transports' send: an H4
/// indicator and the packet written without an allocation, joined on the stack up to
/// `stackJoinLimit` octets and as two buffers (sendmsg, writev) beyond, from any offset a partial
/// write left, and as one record on a packet socket, as the HCI user channel is.
@Suite("H4 writes without an allocation")
struct GatheredWriteTests {
    /// A body that is a slice starting past index 0, as packets' payloads are: one short (joined on
    /// the stack), one past the limit (two buffers).
    static func body(_ length: Int) -> ArraySlice<UInt8> {
        ([0xEE, 0xEE, 0xEE] + (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })[3...]
    }

    static let lengths = [11, FileDescriptor.stackJoinLimit + 200]

    static func pair(_ type: __socket_type) throws -> (FileDescriptor, FileDescriptor) {
        var ends: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(type.rawValue), 0, &ends) == 0)
        return (FileDescriptor(rawValue: ends[0]), FileDescriptor(rawValue: ends[1]))
    }

    /// One read(2) of up to 4 KB: a whole record on a packet socket.
    static func readOnce(_ descriptor: FileDescriptor) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor.rawValue, $0.baseAddress, $0.count) }
        return Array(buffer.prefix(max(0, count)))
    }

    /// Reads until `count` octets came (a stream may deliver them in parts).
    static func read(_ count: Int, from descriptor: FileDescriptor) -> [UInt8] {
        var bytes: [UInt8] = []
        while bytes.count < count {
            let part = readOnce(descriptor)
            if part.isEmpty { break }
            bytes += part
        }
        return bytes
    }

    @Test("From every offset, a stream socket gets the rest of indicator and body, in order", arguments: lengths, [0, 1, 2, 9])
    func streamSocketFromOffset(length: Int, offset: Int) throws {
        let (writer, reader) = try Self.pair(SOCK_STREAM)
        defer { try? writer.close(); try? reader.close() }
        let body = Self.body(length)
        let whole = [UInt8(0x02)] + body
        #expect(try writer.write(header: 0x02, body: body, from: offset, isSocket: true) == whole.count - offset)
        #expect(Self.read(whole.count - offset, from: reader) == Array(whole[offset...]))
    }

    @Test("A pipe (write, writev): the same bytes as the socket's", arguments: lengths)
    func pipeWritesTheSameBytes(length: Int) throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let reader = FileDescriptor(rawValue: ends[0]), writer = FileDescriptor(rawValue: ends[1])
        defer { try? writer.close(); try? reader.close() }
        let body = Self.body(length)
        #expect(try writer.write(header: 0x02, body: body, isSocket: false) == 1 + body.count)
        #expect(Self.read(1 + body.count, from: reader) == [0x02] + Array(body))
        #expect(try writer.write(header: 0x01, body: body, from: 3, isSocket: false) == body.count - 2)
        #expect(Self.read(body.count - 2, from: reader) == Array(body.dropFirst(2)))
    }

    @Test("A packet socket receives indicator and body as one record, as the HCI user channel must", arguments: lengths)
    func packetSocketGetsOneRecord(length: Int) throws {
        let (writer, reader) = try Self.pair(SOCK_SEQPACKET)
        defer { try? writer.close(); try? reader.close() }
        let body = Self.body(length)
        _ = try writer.write(header: 0x02, body: body, isSocket: true)
        _ = try writer.write(header: 0x01, body: [0x03, 0x0C, 0x00][...], isSocket: true)
        #expect(Self.readOnce(reader) == [0x02] + Array(body), "the first record whole, not the indicator alone")
        #expect(Self.readOnce(reader) == [0x01, 0x03, 0x0C, 0x00])
    }

    @Test("An empty body: the indicator alone; from offset 1, nothing to write")
    func emptyBody() throws {
        let (writer, reader) = try Self.pair(SOCK_STREAM)
        defer { try? writer.close(); try? reader.close() }
        #expect(try writer.write(header: 0x04, body: [], isSocket: true) == 1)
        #expect(try writer.write(header: 0x04, body: [], from: 1, isSocket: true) == 0)
        #expect(Self.readOnce(reader) == [0x04])
    }
}
