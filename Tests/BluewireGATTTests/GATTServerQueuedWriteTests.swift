import BluewireATT
import BluewireCore
import Testing
@testable import BluewireGATT

@Suite struct GATTServerQueuedWriteTests {
    /// Prepare Write Requests for `value` in parts of 18 bytes (ATT_MTU 23 − 5), checking each echo.
    func prepareLongWrite(_ server: inout GATTServer, handle: UInt16, _ value: [UInt8]) {
        var offset = 0
        while offset < value.count {
            let part = Array(value[offset..<min(offset + 18, value.count)])
            let request: [UInt8] = [0x16, UInt8(handle & 0xFF), UInt8(handle >> 8), UInt8(offset & 0xFF), UInt8(offset >> 8)] + part
            #expect(server.exchange(request) == [0x17] + Array(request.dropFirst()))
            offset += part.count
        }
    }

    @Test func longWriteIsQueuedEchoedAndWrittenOnExecute() throws {
        var server = try ServerFixture().server()
        let value: [UInt8] = (0..<100).map { UInt8(255 - $0) }
        prepareLongWrite(&server, handle: 0x11, value)
        #expect(server.preparedWriteCount(for: conn) == 6)
        #expect(server.database[handle: 0x11]?.cachedValue == ServerFixture.longValue)
        #expect(server.exchange([0x18, 0x01]) == [0x19])
        #expect(server.database[handle: 0x11]?.cachedValue == value)
        #expect(server.preparedWriteCount(for: conn) == 0)
        #expect(server.takeEvents() == [.valueWritten(connection: conn, handle: 0x11, value: value)])
    }

    @Test func cancelDiscardsTheQueue() throws {
        var server = try ServerFixture().server()
        prepareLongWrite(&server, handle: 0x11, [1, 2, 3])
        #expect(server.exchange([0x18, 0x00]) == [0x19])
        #expect(server.preparedWriteCount(for: conn) == 0)
        #expect(server.database[handle: 0x11]?.cachedValue == ServerFixture.longValue)
        #expect(server.exchange([0x18, 0x01]) == [0x19])
        #expect(server.database[handle: 0x11]?.cachedValue == ServerFixture.longValue)
    }

    @Test func offsetPastTheValueIsInvalidOffsetOnExecute() throws {
        var server = try ServerFixture().server()
        #expect(server.exchange([0x16, 0x18, 0x00, 0x05, 0x00, 0xAA]) == [0x17, 0x18, 0x00, 0x05, 0x00, 0xAA])
        #expect(server.exchange([0x18, 0x01]) == [0x01, 0x18, 0x18, 0x00, 0x07])
        #expect(server.preparedWriteCount(for: conn) == 0)
        #expect(server.database[handle: 0x18]?.cachedValue == [0x00])
        // At the end of the current value is fine: it appends.
        #expect(server.exchange([0x16, 0x18, 0x00, 0x01, 0x00, 0xAA]) == [0x17, 0x18, 0x00, 0x01, 0x00, 0xAA])
        #expect(server.exchange([0x18, 0x01]) == [0x19])
        #expect(server.database[handle: 0x18]?.cachedValue == [0x00, 0xAA])
    }

    @Test func aResultOver512BytesIsInvalidAttributeValueLength() throws {
        var server = try ServerFixture().server()
        prepareLongWrite(&server, handle: 0x11, Array(repeating: 1, count: 500))
        let last: [UInt8] = [0x16, 0x11, 0x00, 0xF4, 0x01] + Array(repeating: 2, count: 13)
        #expect(server.exchange(last) == [0x17] + Array(last.dropFirst()))
        #expect(server.exchange([0x18, 0x01]) == [0x01, 0x18, 0x11, 0x00, 0x0D])
        #expect(server.database[handle: 0x11]?.cachedValue == ServerFixture.longValue)
    }

    @Test func aFailedReliableWriteWritesNothing() throws {
        var server = try ServerFixture().server()
        #expect(server.exchange([0x16, 0x11, 0x00, 0x00, 0x00, 0x01]) == [0x17, 0x11, 0x00, 0x00, 0x00, 0x01])
        #expect(server.exchange([0x16, 0x0D, 0x00, 0x00, 0x00, 0x01]) == [0x17, 0x0D, 0x00, 0x00, 0x00, 0x01])
        // The CCCD would be left at one byte.
        #expect(server.exchange([0x18, 0x01]) == [0x01, 0x18, 0x0D, 0x00, 0x0D])
        #expect(server.database[handle: 0x11]?.cachedValue == ServerFixture.longValue)
        #expect(server.takeEvents().isEmpty)
    }

    @Test func reliableWritesAcrossAttributesAllApply() throws {
        var server = try ServerFixture().server()
        _ = server.exchange([0x16, 0x18, 0x00, 0x00, 0x00, 0x09])
        _ = server.exchange([0x16, 0x0D, 0x00, 0x00, 0x00, 0x01, 0x00])
        _ = server.exchange([0x16, 0x18, 0x00, 0x01, 0x00, 0x08])
        #expect(server.exchange([0x18, 0x01]) == [0x19])
        #expect(server.database[handle: 0x18]?.cachedValue == [0x09, 0x08])
        #expect(server.subscription(connection: conn, valueHandle: 0x0C).notifications)
        #expect(server.takeEvents() == [
            .valueWritten(connection: conn, handle: 0x18, value: [0x09, 0x08]),
            .subscriptionChanged(GATTSubscription(connection: conn, valueHandle: 0x0C, configuration: 1)),
        ])
    }

    @Test func prepareChecksHandleAndPermissionImmediately() throws {
        var server = try ServerFixture().server()
        #expect(server.exchange([0x16, 0x99, 0x00, 0x00, 0x00, 0x01]) == [0x01, 0x16, 0x99, 0x00, 0x01])
        #expect(server.exchange([0x16, 0x03, 0x00, 0x00, 0x00, 0x01]) == [0x01, 0x16, 0x03, 0x00, 0x03])
        #expect(server.exchange([0x16, 0x14, 0x00, 0x00, 0x00, 0x01]) == [0x01, 0x16, 0x14, 0x00, 0x0F])
        #expect(server.exchange([0x16, 0x11, 0x00, 0x00]) == [0x01, 0x16, 0x00, 0x00, 0x04])
        #expect(server.preparedWriteCount(for: conn) == 0)
    }

    @Test func theQueueIsBoundedInEntriesAndBytes() throws {
        var server = try ServerFixture().server(GATTServerConfiguration(maximumPreparedWrites: 2, maximumPreparedWriteBytes: 20))
        #expect(server.exchange([0x16, 0x11, 0x00, 0x00, 0x00, 0x01]) == [0x17, 0x11, 0x00, 0x00, 0x00, 0x01])
        #expect(server.exchange([0x16, 0x11, 0x00, 0x01, 0x00, 0x02]) == [0x17, 0x11, 0x00, 0x01, 0x00, 0x02])
        #expect(server.exchange([0x16, 0x11, 0x00, 0x02, 0x00, 0x03]) == [0x01, 0x16, 0x11, 0x00, 0x09])
        #expect(server.exchange([0x18, 0x00]) == [0x19])
        let eighteen: [UInt8] = [0x16, 0x11, 0x00, 0x00, 0x00] + Array(repeating: 1, count: 18)
        #expect(server.exchange(eighteen) == [0x17] + Array(eighteen.dropFirst()))
        #expect(server.exchange([0x16, 0x11, 0x00, 0x12, 0x00, 1, 2, 3]) == [0x01, 0x16, 0x11, 0x00, 0x09])
        #expect(server.preparedWriteCount(for: conn) == 1)
    }

    @Test func reservedExecuteFlagsAreInvalidPDU() throws {
        var server = try ServerFixture().server()
        _ = server.exchange([0x16, 0x18, 0x00, 0x00, 0x00, 0x01])
        #expect(server.exchange([0x18, 0x02]) == [0x01, 0x18, 0x00, 0x00, 0x04])
        #expect(server.exchange([0x18]) == [0x01, 0x18, 0x00, 0x00, 0x04])
        #expect(server.exchange([0x18, 0x01, 0x00]) == [0x01, 0x18, 0x00, 0x00, 0x04])
        #expect(server.preparedWriteCount(for: conn) == 1)
    }

    @Test func dynamicLongWritesArriveJoinedWithTheirOffset() throws {
        let fixture = try ServerFixture()
        var server = fixture.server()
        let value: [UInt8] = (0..<40).map { UInt8($0) }
        prepareLongWrite(&server, handle: 0x1A, value)
        _ = server.exchange([0x16, 0x1A, 0x00, 0x64, 0x00, 0x77])
        #expect(server.exchange([0x18, 0x01]) == [0x19])
        let writes = fixture.log.writes.withLock { $0 }
        #expect(writes.map(\.value) == [value, [0x77]])
        #expect(writes.map(\.offset) == [0, 100])
        #expect(writes.allSatisfy { $0.kind == .executeWrite })
    }

    @Test func dynamicHandlerErrorsOnExecuteAreSent() throws {
        var server = try ServerFixture().server()
        _ = server.exchange([0x16, 0x1A, 0x00, 0x00, 0x00, 0xEE])
        #expect(server.exchange([0x18, 0x01]) == [0x01, 0x18, 0x1A, 0x00, 0x81])
    }
}
