import Bluewire
import BluewireATT
import BluewireCore
import BluewireGATT
import Testing

/// An `ATTRequestPerformer` whose far end is the real, in-process `GATTServer`: requests are encoded,
/// answered by the server from bytes and decoded again; notifications the server produces are decoded
/// and delivered to the streams registered for their handle.
private actor InProcessServerPerformer: ATTRequestPerformer {
    var server: GATTServer
    let connection: UInt16 = 0x0001
    private var subscribers: [UInt16: [AsyncStream<ArraySlice<UInt8>>.Continuation]] = [:]

    init(database: GATTDatabase) {
        server = GATTServer(database: database)
        server.connect(connection)
    }

    var mtu: Int { server.mtu(for: connection) }

    func request(_ pdu: ATTPDU) async throws(ConnectionError) -> ATTPDU {
        // The server answers every request; an answer that does not decode is not one.
        guard let answer = server.handle(pdu.encode(), from: connection), let decoded = try? ATTPDU(decoding: answer) else {
            throw .unexpectedResponse(pdu.opcode)
        }
        return decoded
    }

    func send(_ pdu: ATTPDU) async throws(ConnectionError) {
        _ = server.handle(pdu.encode(), from: connection)
    }

    func notifications(for valueHandle: UInt16) async -> AsyncStream<ArraySlice<UInt8>> {
        let (stream, continuation) = AsyncStream.makeStream(of: ArraySlice<UInt8>.self)
        subscribers[valueHandle, default: []].append(continuation)
        return stream
    }

    /// The application updates a value; the server notifies subscribed clients.
    func serverNotifies(_ handle: UInt16, _ value: [UInt8]) throws {
        for outbound in try server.notify(handle: handle, value: value) {
            if case .handleValueNotification(let handle, let value) = try ATTPDU(decoding: outbound.bytes) {
                for subscriber in subscribers[handle] ?? [] { subscriber.yield(value) }
            }
        }
    }

    func cachedValue(_ handle: UInt16) -> [UInt8]? {
        server.database.attributes.first { $0.handle == handle }?.cachedValue
    }
}

@Suite("Operation queue against the real GATT server")
struct OperationQueueServerTests {
    @Test("Discovery, long read, long write and a notification, all through the queue, against GATTServer")
    func endToEndThroughTheQueue() async throws {
        var builder = GATTDatabaseBuilder()
        let longName = Array("A device name long enough to need Read Blob twice over".utf8)
        try builder.addService(.genericAccess)
        try builder.addCharacteristic(.deviceName, properties: [.read], permissions: [.read], value: .cached(longName))
        try builder.addService(BluetoothUUID(0xFFF0))
        let data = try builder.addCharacteristic(
            BluetoothUUID(0xFFF1), properties: [.read, .write, .notify], permissions: [.read, .write], value: .cached([]))
        let performer = InProcessServerPerformer(database: builder.build())
        let queue = GATTOperationQueue(performer: performer)

        let services = try await queue.run(GATTOperations.discoverAllPrimaryServices())
        #expect(services.map(\.uuid) == [.genericAccess, BluetoothUUID(0xFFF0)])
        let gap = try #require(services.first)
        let name = try #require(try await queue.run(GATTOperations.discoverCharacteristics(of: gap, uuid: .deviceName)).first)
        #expect(try await queue.run(GATTOperations.readLong(handle: name.valueHandle).timeout(.seconds(30))) == longName)

        let custom = try #require(services.last)
        let characteristic = try #require(try await queue.run(GATTOperations.discoverCharacteristics(of: custom)).first)
        #expect(characteristic.valueHandle == data.valueHandle)
        let image = ramp(70)
        try await queue.run(GATTOperations.writeLong(image, to: characteristic.valueHandle))
        #expect(await performer.cachedValue(characteristic.valueHandle) == image)

        var updates = await performer.notifications(for: characteristic.valueHandle).makeAsyncIterator()
        let cccd = try await queue.run(GATTOperations.subscribe(to: characteristic))
        #expect(cccd == data.clientConfigurationHandle)
        try await performer.serverNotifies(characteristic.valueHandle, [0x42])
        #expect(await updates.next() == [0x42])
    }
}
