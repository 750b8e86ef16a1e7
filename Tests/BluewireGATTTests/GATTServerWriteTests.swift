import BluewireATT
import BluewireCore
import Testing
@testable import BluewireGATT

@Suite struct GATTServerWriteTests {
    @Test func writeRequestStoresCachedValuesAndReportsThem() throws {
        var server = try ServerFixture().server()
        #expect(server.exchange([0x12, 0x18, 0x00, 0x2A]) == [0x13])
        #expect(server.database[handle: 0x18]?.cachedValue == [0x2A])
        #expect(server.takeEvents() == [.valueWritten(connection: conn, handle: 0x18, value: [0x2A])])
        #expect(server.exchange([0x12, 0x11, 0x00, 0x01, 0x02]) == [0x13])
        #expect(server.exchange([0x0A, 0x11, 0x00]) == [0x0B, 0x01, 0x02])
        // An empty value is a valid write.
        #expect(server.exchange([0x12, 0x11, 0x00]) == [0x13])
        #expect(server.exchange([0x0A, 0x11, 0x00]) == [0x0B])
    }

    @Test func writeErrorsCarryTheHandle() throws {
        var server = try ServerFixture().server()
        #expect(server.exchange([0x12, 0x99, 0x00, 0x01]) == [0x01, 0x12, 0x99, 0x00, 0x01])
        #expect(server.exchange([0x12, 0x00, 0x00, 0x01]) == [0x01, 0x12, 0x00, 0x00, 0x01])
        #expect(server.exchange([0x12, 0x03, 0x00, 0x41]) == [0x01, 0x12, 0x03, 0x00, 0x03])
        #expect(server.exchange([0x12, 0x14, 0x00, 0x01]) == [0x01, 0x12, 0x14, 0x00, 0x0F])
        #expect(server.exchange([0x12, 0x16, 0x00, 0x01]) == [0x01, 0x12, 0x16, 0x00, 0x05])
        #expect(server.exchange([0x12, 0x03]) == [0x01, 0x12, 0x00, 0x00, 0x04])
        #expect(server.database[handle: 0x03]?.cachedValue == Array("Bluewire".utf8))
        #expect(server.takeEvents().isEmpty)
        server.setSecurityLevel(.encrypted, for: conn)
        #expect(server.exchange([0x12, 0x14, 0x00, 0x01]) == [0x13])
        #expect(server.exchange([0x12, 0x16, 0x00, 0x01]) == [0x01, 0x12, 0x16, 0x00, 0x05])
        server.setSecurityLevel(.authenticated, for: conn)
        #expect(server.exchange([0x12, 0x16, 0x00, 0x01]) == [0x13])
    }

    @Test func valuesOver512BytesAreInvalidAttributeValueLength() throws {
        var server = try ServerFixture().server()
        _ = server.exchange([0x02, 0x05, 0x02])
        #expect(server.exchange([0x12, 0x11, 0x00] + Array(repeating: 7, count: 513)) == [0x01, 0x12, 0x11, 0x00, 0x0D])
        #expect(server.exchange([0x12, 0x11, 0x00] + Array(repeating: 7, count: 512)) == [0x13])
        #expect(server.database[handle: 0x11]?.cachedValue?.count == 512)
    }

    @Test func writeCommandWritesSilentlyAndDropsErrors() throws {
        var server = try ServerFixture().server()
        #expect(server.exchange([0x52, 0x18, 0x00, 0x05]) == nil)
        #expect(server.database[handle: 0x18]?.cachedValue == [0x05])
        #expect(server.exchange([0x52, 0x03, 0x00, 0x41]) == nil)
        #expect(server.exchange([0x52, 0x99, 0x00, 0x41]) == nil)
        #expect(server.exchange([0x52, 0x18]) == nil)
        #expect(server.database[handle: 0x03]?.cachedValue == Array("Bluewire".utf8))
        #expect(server.takeEvents() == [.valueWritten(connection: conn, handle: 0x18, value: [0x05])])
    }

    @Test func signedWriteCommandsAreIgnoredWithoutASigningKey() throws {
        var server = try ServerFixture().server()
        let signed: [UInt8] = [0xD2, 0x18, 0x00, 0x05] + Array(repeating: 0xAB, count: 12)
        #expect(server.exchange(signed) == nil)
        #expect(server.database[handle: 0x18]?.cachedValue == [0x00])
        #expect(server.takeEvents().isEmpty)
    }

    @Test func clientConfigurationWritesSubscribePerConnection() throws {
        var server = try ServerFixture().server()
        server.connect(0x0041)
        #expect(server.exchange([0x12, 0x0D, 0x00, 0x01, 0x00]) == [0x13])
        #expect(server.exchange([0x12, 0x12, 0x00, 0x03, 0x00], 0x0041) == [0x13])
        #expect(server.takeEvents() == [
            .subscriptionChanged(GATTSubscription(connection: conn, valueHandle: 0x0C, configuration: 1)),
            .subscriptionChanged(GATTSubscription(connection: 0x0041, valueHandle: 0x11, configuration: 3)),
        ])
        #expect(server.subscription(connection: conn, valueHandle: 0x0C).notifications)
        #expect(!server.subscription(connection: 0x0041, valueHandle: 0x0C).notifications)
        #expect(server.subscription(connection: 0x0041, valueHandle: 0x11).indications)
        // The database's own CCCD bytes are untouched: configuration is per client.
        #expect(server.database[handle: 0x0D]?.cachedValue == [0, 0])
        // Writing the same value again changes nothing and reports nothing.
        #expect(server.exchange([0x12, 0x0D, 0x00, 0x01, 0x00]) == [0x13])
        #expect(server.takeEvents().isEmpty)
        #expect(server.exchange([0x12, 0x0D, 0x00, 0x00, 0x00]) == [0x13])
        #expect(server.takeEvents() == [.subscriptionChanged(GATTSubscription(connection: conn, valueHandle: 0x0C, configuration: 0))])
        #expect(server.clientConfigurations(for: 0x0041) == [0x12: 3])
    }

    @Test func clientConfigurationMustBeTwoBytes() throws {
        var server = try ServerFixture().server()
        #expect(server.exchange([0x12, 0x0D, 0x00, 0x01]) == [0x01, 0x12, 0x0D, 0x00, 0x0D])
        #expect(server.exchange([0x12, 0x0D, 0x00, 0x01, 0x00, 0x00]) == [0x01, 0x12, 0x0D, 0x00, 0x0D])
        #expect(server.exchange([0x52, 0x0D, 0x00, 0x01]) == nil)
        #expect(!server.subscription(connection: conn, valueHandle: 0x0C).notifications)
        #expect(server.takeEvents().isEmpty)
    }

    @Test func dynamicWritesReachTheHandlerWhoseErrorsAreSent() throws {
        let fixture = try ServerFixture()
        var server = fixture.server()
        #expect(server.exchange([0x12, 0x1A, 0x00, 0x01, 0x02]) == [0x13])
        #expect(server.exchange([0x52, 0x1A, 0x00, 0x03]) == nil)
        #expect(server.exchange([0x12, 0x1A, 0x00, 0xEE]) == [0x01, 0x12, 0x1A, 0x00, 0x81])
        #expect(server.exchange([0x52, 0x1A, 0x00, 0xEE]) == nil)
        let writes = fixture.log.writes.withLock { $0 }
        #expect(writes.map(\.value) == [[0x01, 0x02], [0x03]])
        #expect(writes.map(\.kind) == [.request, .command])
        #expect(writes.allSatisfy { $0.offset == 0 && $0.connection == conn && $0.handle == 0x1A })
        #expect(server.takeEvents().isEmpty)
    }

    @Test func restoredBondedConfigurationIsServed() throws {
        var server = try ServerFixture().server()
        server.connect(0x0042, securityLevel: .encrypted, clientConfigurations: [0x0D: 1, 0x03: 1])
        #expect(server.exchange([0x0A, 0x0D, 0x00], 0x0042) == [0x0B, 0x01, 0x00])
        #expect(server.clientConfigurations(for: 0x0042) == [0x0D: 1])
        #expect(server.exchange([0x0A, 0x14, 0x00], 0x0042) == [0x0B, 0xE0])
    }
}
