import BluewireATT
import BluewireCore
import Testing
@testable import BluewireGATT

@Suite struct GATTServerNotificationTests {
    /// A fixture server with connections 0x40 (subscribed as given) and 0x41 (not subscribed).
    func server(configuration: UInt8, handle: UInt8 = 0x12) throws -> GATTServer {
        var server = try ServerFixture().server(GATTServerConfiguration(maximumQueuedIndications: 2))
        server.connect(0x0041)
        #expect(server.exchange([0x12, handle, 0x00, configuration, 0x00]) == [0x13])
        _ = server.takeEvents()
        return server
    }

    @Test func notificationsGoOnlyToSubscribedConnections() throws {
        var server = try server(configuration: 0x01, handle: 0x0D)
        #expect(try server.notify(handle: 0x0C, value: [0x55]) == [GATTOutboundPDU(connection: conn, bytes: [0x1B, 0x0C, 0x00, 0x55])])
        #expect(try server.notify(handle: 0x0C, value: [0x55], to: 0x0041) == [])
        #expect(try server.indicate(handle: 0x11, value: [1]) == [])
    }

    @Test func notificationsAreCutToMTUMinus3() throws {
        var server = try server(configuration: 0x01)
        let value = Array(ServerFixture.longValue[0..<100])
        #expect(try server.notify(handle: 0x11, value: value) == [GATTOutboundPDU(connection: conn, bytes: [0x1B, 0x11, 0x00] + Array(value[0..<20]))])
        _ = server.exchange([0x02, 0x40, 0x00])
        #expect(try server.notify(handle: 0x11, value: value)[0].bytes == [0x1B, 0x11, 0x00] + Array(value[0..<61]))
    }

    @Test func indicationsWaitForConfirmation() throws {
        var server = try server(configuration: 0x02)
        #expect(try server.indicate(handle: 0x11, value: [1]) == [GATTOutboundPDU(connection: conn, bytes: [0x1D, 0x11, 0x00, 0x01])])
        #expect(server.indicationOutstanding(on: conn))
        #expect(try server.indicate(handle: 0x11, value: [2]) == [])
        #expect(try server.indicate(handle: 0x11, value: [3]) == [])
        #expect(server.queuedIndicationCount(for: conn) == 2)
        #expect(server.exchange([0x1E]) == [0x1D, 0x11, 0x00, 0x02])
        #expect(server.confirm(connection: conn) == GATTOutboundPDU(connection: conn, bytes: [0x1D, 0x11, 0x00, 0x03]))
        #expect(server.exchange([0x1E]) == nil)
        #expect(!server.indicationOutstanding(on: conn))
        #expect(server.takeEvents() == [
            .indicationConfirmed(connection: conn, handle: 0x11),
            .indicationConfirmed(connection: conn, handle: 0x11),
            .indicationConfirmed(connection: conn, handle: 0x11),
        ])
        // A confirmation with nothing outstanding is ignored.
        #expect(server.exchange([0x1E]) == nil)
        #expect(server.takeEvents().isEmpty)
    }

    @Test func theIndicationQueueIsBounded() throws {
        var server = try server(configuration: 0x02)
        _ = try server.indicate(handle: 0x11, value: [1])
        _ = try server.indicate(handle: 0x11, value: [2])
        _ = try server.indicate(handle: 0x11, value: [3])
        #expect(try server.indicate(handle: 0x11, value: [4]) == [])
        #expect(server.queuedIndicationCount(for: conn) == 2)
        #expect(server.takeEvents() == [.indicationDropped(connection: conn, handle: 0x11)])
    }

    @Test func indicationsAreCutToMTUMinus3AndStoredAtMost512Bytes() throws {
        var server = try server(configuration: 0x02)
        let value = Array(repeating: UInt8(9), count: 600)
        #expect(try server.indicate(handle: 0x11, value: value)[0].bytes == [0x1D, 0x11, 0x00] + Array(repeating: 9, count: 20))
    }

    @Test func unsubscribingDropsQueuedIndications() throws {
        var server = try server(configuration: 0x02)
        _ = try server.indicate(handle: 0x11, value: [1])
        _ = try server.indicate(handle: 0x11, value: [2])
        #expect(server.exchange([0x12, 0x12, 0x00, 0x00, 0x00]) == [0x13])
        #expect(server.exchange([0x1E]) == nil)
        #expect(!server.indicationOutstanding(on: conn))
    }

    @Test func connectionsAreIndependent() throws {
        var server = try server(configuration: 0x03)
        #expect(server.exchange([0x12, 0x12, 0x00, 0x02, 0x00], 0x0041) == [0x13])
        let sent = try server.indicate(handle: 0x11, value: [7])
        #expect(sent.map(\.connection) == [0x0040, 0x0041])
        #expect(server.exchange([0x1E], 0x0041) == nil)
        #expect(server.indicationOutstanding(on: conn))
        #expect(!server.indicationOutstanding(on: 0x0041))
        #expect(try server.notify(handle: 0x11, value: [8]).map(\.connection) == [0x0040])
    }

    @Test func onlyCharacteristicsWithThePropertyCanNotifyOrIndicate() throws {
        var server = try server(configuration: 0x01)
        #expect(throws: GATTServerError.notCharacteristicValue(0x02)) { try server.notify(handle: 0x02, value: []) }
        #expect(throws: GATTServerError.notSupportedByCharacteristic(0x03)) { try server.notify(handle: 0x03, value: []) }
        #expect(throws: GATTServerError.notCharacteristicValue(0x99)) { try server.indicate(handle: 0x99, value: []) }
        #expect(throws: GATTServerError.notSupportedByCharacteristic(0x0C)) { try server.indicate(handle: 0x0C, value: []) }
        #expect(throws: GATTServerError.notSupportedByCharacteristic(0x08)) { try server.notify(handle: 0x08, value: []) }
    }

    @Test func disconnectForgetsEverything() throws {
        var server = try server(configuration: 0x03)
        _ = try server.indicate(handle: 0x11, value: [1])
        _ = server.exchange([0x16, 0x18, 0x00, 0x00, 0x00, 0x01])
        server.disconnect(conn)
        #expect(server.connectionCount == 1)
        #expect(!server.indicationOutstanding(on: conn))
        #expect(server.preparedWriteCount(for: conn) == 0)
        #expect(try server.notify(handle: 0x11, value: [1]) == [])
        server.connect(conn)
        #expect(server.mtu(for: conn) == 23)
        #expect(!server.subscription(connection: conn, valueHandle: 0x11).notifications)
    }
}
