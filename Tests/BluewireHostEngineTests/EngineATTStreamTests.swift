import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import Synchronization
import Testing

/// `.streamATT`: sequence-numbered notifications and Write Commands the engine sends by itself, paced
/// only by the controller's ACL buffers (Core Vol 4 Part E §4.1.1), between two engines on one link.
/// The bring-up is bumble's (27-octet LE ACL buffers, 64 of them) and ATT_MTU stays 23, so every value
/// is 20 octets and one ACL packet.
@Suite("Host engine: ATT streams paced by ACL buffers")
struct EngineATTStreamTests {
    /// The peripheral's database: a Notify characteristic (value 3, CCCD 4) and a Write Without
    /// Response one (value 6) whose handler records each value's sequence number.
    final class Sink: Sendable {
        let sequences = Mutex<[UInt32]>([])
        let lengths = Mutex<Set<Int>>([])
    }

    static let notifyHandle: UInt16 = 3
    static let cccdHandle: UInt16 = 4
    static let sinkHandle: UInt16 = 6

    static func linked(sink: Sink) throws -> LinkedEngines {
        var builder = GATTDatabaseBuilder()
        try builder.addService(BluetoothUUID(0xFFF0))
        try builder.addCharacteristic(BluetoothUUID(0xFFF1), properties: [.notify], permissions: [], value: .cached([]))
        try builder.addCharacteristic(
            BluetoothUUID(0xFFF2), properties: [.writeWithoutResponse], permissions: [.write],
            value: .dynamic(GATTDynamicValue(write: { request throws(GATTAttributeError) in
                let value = request.value
                let sequence = UInt32(value[0]) | UInt32(value[1]) << 8 | UInt32(value[2]) << 16 | UInt32(value[3]) << 24
                sink.sequences.withLock { $0.append(sequence) }
                sink.lengths.withLock { _ = $0.insert(value.count) }
            })))
        var links = try LinkedEngines(central: nil, peripheral: nil)
        links.peripheral.engine.setDatabase(builder.build())
        return links
    }

    /// Discovers, then subscribes the central to the Notify characteristic.
    static func subscribe(_ links: inout LinkedEngines) throws {
        let discover = links.central.perform(.gatt(connection: links.handle, .discoverAll))
        links.pump()
        guard case .success(.services(let services))? = links.central.result(discover) else {
            Issue.record("discovery failed: \(String(describing: links.central.result(discover)))")
            return
        }
        let characteristic = try #require(services.first?.characteristics.first { $0.characteristic.valueHandle == notifyHandle })
        let subscribe = links.central.perform(.gatt(connection: links.handle, .subscribe(
            characteristic.characteristic, indications: false, descriptorHandle: cccdHandle)))
        links.pump()
        #expect(links.central.result(subscribe) == .success(.configured(descriptorHandle: cccdHandle)))
        _ = links.central.takeEvents()
        _ = links.peripheral.takeEvents()
    }

    /// Moves the packets both hosts wrote, `rounds` times (a stream without end never settles, so
    /// `LinkedEngines.pump` would report it).
    static func move(_ links: inout LinkedEngines, rounds: Int) {
        for _ in 0..<rounds {
            let fromCentral = links.central.takeWritten()
            let fromPeripheral = links.peripheral.takeWritten()
            for packet in fromCentral { links.fromHost(packet, isCentral: true) }
            for packet in fromPeripheral { links.fromHost(packet, isCentral: false) }
        }
    }

    /// The sequence numbers of the notifications the central got, in arrival order.
    static func notified(_ events: [HostEngineEvent]) -> [(sequence: UInt32, length: Int)] {
        events.compactMap { event in
            guard case .notification(_, notifyHandle, let value, false) = event, value.count >= 4 else { return nil }
            let i = value.startIndex
            let sequence = UInt32(value[i]) | UInt32(value[i + 1]) << 8 | UInt32(value[i + 2]) << 16 | UInt32(value[i + 3]) << 24
            return (sequence, value.count)
        }
    }

    @Test("a notification stream sends its limit, numbered in order, ATT_MTU - 3 octets each, then completes")
    func notificationsUpToTheLimit() throws {
        let sink = Sink()
        var links = try Self.linked(sink: sink)
        try Self.subscribe(&links)
        let stream = links.peripheral.perform(.streamATT(
            connection: links.handle, ATTStream(pdu: .notification, valueHandle: Self.notifyHandle, firstSequence: 7, limit: 300)))
        links.pump()
        let arrived = Self.notified(links.central.takeEvents())
        #expect(arrived.map(\.sequence) == Array(7..<307), "every value once, in order, from firstSequence")
        #expect(Set(arrived.map(\.length)) == [20], "ATT_MTU 23 - 3")
        #expect(links.peripheral.result(stream) == .success(.streamed(sent: 300, end: .limit)))
        #expect(links.peripheral.engine.attStreamSent(connection: links.handle, pdu: .notification) == nil, "no stream runs any more")
    }

    @Test("the stream keeps at most two buffer counts queued; it waits for buffers and goes on when they return")
    func theQueueStaysBounded() throws {
        let sink = Sink()
        var links = try Self.linked(sink: sink)
        try Self.subscribe(&links)
        let buffers = 64  // bumble's LE Read Buffer Size
        let stream = links.peripheral.perform(.streamATT(
            connection: links.handle, ATTStream(pdu: .notification, valueHandle: Self.notifyHandle)))
        // No Number Of Completed Packets: the controller has every buffer, the host queues two counts more.
        #expect(links.peripheral.takeWritten().count == buffers)
        #expect(links.peripheral.engine.queuedACLPackets(connection: links.handle) == 2 * buffers)
        #expect(links.peripheral.engine.attStreamSent(connection: links.handle, pdu: .notification) == 3 * buffers)
        // Ten buffers come back: ten more packets go, ten more values are made, the queue is as long.
        links.peripheral.controller(ControllerBytes.completedPackets(handle: links.handle, count: 10))
        #expect(links.peripheral.takeWritten().count == 10)
        #expect(links.peripheral.engine.queuedACLPackets(connection: links.handle) == 2 * buffers)
        #expect(links.peripheral.engine.attStreamSent(connection: links.handle, pdu: .notification) == 3 * buffers + 10)
        // Stopped: done at once, the stream itself once the controller has taken what it queued.
        let stop = links.peripheral.perform(.stopATTStream(connection: links.handle, .notification))
        #expect(links.peripheral.result(stop) == .success(.done))
        #expect(links.peripheral.result(stream) == nil, "128 packets still wait for buffers")
        for _ in 0..<2 {
            links.peripheral.controller(ControllerBytes.completedPackets(handle: links.handle, count: UInt16(buffers)))
            _ = links.peripheral.takeWritten()
        }
        #expect(links.peripheral.engine.queuedACLPackets(connection: links.handle) == 0)
        #expect(links.peripheral.result(stream) == .success(.streamed(sent: 3 * buffers + 10, end: .stopped)))
    }

    @Test("a central that unsubscribes ends the stream; one never subscribed gets nothing")
    func unsubscribingEndsTheStream() throws {
        let sink = Sink()
        var links = try Self.linked(sink: sink)
        let unsubscribed = links.peripheral.perform(.streamATT(
            connection: links.handle, ATTStream(pdu: .notification, valueHandle: Self.notifyHandle)))
        #expect(links.peripheral.result(unsubscribed) == .success(.streamed(sent: 0, end: .unsubscribed)))
        #expect(links.peripheral.takeWritten().isEmpty)

        try Self.subscribe(&links)
        let stream = links.peripheral.perform(.streamATT(
            connection: links.handle, ATTStream(pdu: .notification, valueHandle: Self.notifyHandle)))
        Self.move(&links, rounds: 5)
        let characteristic = GATTCharacteristic(
            handle: Self.notifyHandle - 1, valueHandle: Self.notifyHandle, properties: [.notify], uuid: BluetoothUUID(0xFFF1),
            endHandle: Self.cccdHandle)
        let unsubscribe = links.central.perform(.gatt(connection: links.handle, .unsubscribe(characteristic, descriptorHandle: Self.cccdHandle)))
        // The stream ends with the Write Request; the notifications it queued before still arrive.
        links.pump()
        #expect(links.central.result(unsubscribe) == .success(.configured(descriptorHandle: Self.cccdHandle)))
        guard case .success(.streamed(let sent, .unsubscribed))? = links.peripheral.result(stream) else {
            Issue.record("the stream did not end unsubscribed: \(String(describing: links.peripheral.result(stream)))")
            return
        }
        #expect(sent > 0)
        #expect(Self.notified(links.central.takeEvents()).map(\.sequence) == Array(0..<UInt32(sent)), "everything sent arrived, in order")
    }

    @Test("a Write Command stream: the server gets every value in order; stop ends it; refused before discovery")
    func writeCommands() throws {
        let sink = Sink()
        var links = try Self.linked(sink: sink)
        let refused = links.central.perform(.streamATT(
            connection: links.handle, ATTStream(pdu: .writeCommand, valueHandle: Self.sinkHandle)))
        guard case .failure(.refused)? = links.central.result(refused) else {
            Issue.record("a Write Command stream before discovery: \(String(describing: links.central.result(refused)))")
            return
        }
        links.discover()
        let stream = links.central.perform(.streamATT(
            connection: links.handle, ATTStream(pdu: .writeCommand, valueHandle: Self.sinkHandle, length: 12)))
        Self.move(&links, rounds: 4)
        let sentSoFar = try #require(links.central.engine.attStreamSent(connection: links.handle, pdu: .writeCommand))
        #expect(sentSoFar > 0)
        let stop = links.central.perform(.stopATTStream(connection: links.handle, .writeCommand))
        #expect(links.central.result(stop) == .success(.done))
        links.pump()
        guard case .success(.streamed(let sent, .stopped))? = links.central.result(stream) else {
            Issue.record("the stream did not end stopped: \(String(describing: links.central.result(stream)))")
            return
        }
        #expect(sent >= sentSoFar)
        #expect(sink.sequences.withLock { $0 } == Array(0..<UInt32(sent)), "the handler got every value once, in order")
        #expect(sink.lengths.withLock { $0 } == [12], "the length asked for")
    }

    @Test("the link's end completes the stream with the reason")
    func disconnectionEndsTheStream() throws {
        let sink = Sink()
        var links = try Self.linked(sink: sink)
        links.discover()
        let stream = links.central.perform(.streamATT(
            connection: links.handle, ATTStream(pdu: .writeCommand, valueHandle: Self.sinkHandle)))
        Self.move(&links, rounds: 2)
        let sent = try #require(links.central.engine.attStreamSent(connection: links.handle, pdu: .writeCommand))
        links.central.controller(ControllerBytes.disconnectionComplete(handle: links.handle, reason: 0x08))
        #expect(links.central.result(stream) == .success(.streamed(sent: sent, end: .disconnected(.connectionTimeout))))
    }

    @Test("a second stream of the same PDU on the link replaces the first")
    func aNewStreamReplacesTheRunningOne() throws {
        let sink = Sink()
        var links = try Self.linked(sink: sink)
        links.discover()
        let first = links.central.perform(.streamATT(
            connection: links.handle, ATTStream(pdu: .writeCommand, valueHandle: Self.sinkHandle)))
        Self.move(&links, rounds: 2)
        let second = links.central.perform(.streamATT(
            connection: links.handle, ATTStream(pdu: .writeCommand, valueHandle: Self.sinkHandle, firstSequence: 1_000_000, limit: 5)))
        links.pump()
        guard case .success(.streamed(let sent, .replaced))? = links.central.result(first) else {
            Issue.record("the first stream was not replaced: \(String(describing: links.central.result(first)))")
            return
        }
        #expect(links.central.result(second) == .success(.streamed(sent: 5, end: .limit)))
        #expect(sink.sequences.withLock { $0 } == Array(0..<UInt32(sent)) + Array(1_000_000..<1_000_005), "never interleaved")
    }
}
