import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import Testing

/// Once the engine has read Disconnection Complete, it writes nothing more on that handle (Core Vol 4
/// Part E §7.7.5: the handle is gone, and the host frees the buffers its packets held, §4.3).
///
/// A controller cannot check this rule itself: an ACL packet can reach it after the end only because
/// it was sent before the host read the event, and the virtual controller lets as many of those pass
/// as the host's credits allowed (`VirtualController.lateACLPackets`). The rule is checked here,
/// where the order in which the engine reads and writes is exact.
@Suite("Host engine: nothing is written on a handle after its Disconnection Complete")
struct EngineNothingAfterDisconnectionTests {
    /// ACL packets in `written` on `handle`.
    static func acl(on handle: UInt16, in written: [HCIPacket]) -> [HCIPacket] {
        written.filter { packet in
            guard packet.type == .acl, packet.payload.count >= 2 else { return false }
            let i = packet.payload.startIndex
            return UInt16(packet.payload[i]) | UInt16(packet.payload[i + 1] & 0x0F) << 8 == handle
        }
    }

    @Test("with every buffer held and more queued (a Write Command stream and a read behind it), the end writes nothing; a late credit, time and new requests write nothing either")
    func queuedPacketsAreDroppedAtTheEnd() throws {
        let sink = EngineATTStreamTests.Sink()
        var links = try EngineATTStreamTests.linked(sink: sink)
        links.discover()
        let handle = links.handle
        // The stream fills the controller's buffers (no credit comes back: nothing is moved), and
        // keeps more queued behind them; a read waits in the queue too.
        let stream = links.central.perform(.streamATT(
            connection: handle, ATTStream(pdu: .writeCommand, valueHandle: EngineATTStreamTests.sinkHandle)))
        let read = links.central.perform(.gatt(connection: handle, .read(handle: 1)))
        let beforeEnd = Self.acl(on: handle, in: links.central.takeWritten())
        #expect(!beforeEnd.isEmpty)
        #expect(links.central.engine.aclPacketsInFlight(connection: handle) == beforeEnd.count)
        #expect(links.central.engine.aclQueuedCount(handle: handle) > 0, "more is queued than the buffers hold")

        links.central.controller(ControllerBytes.disconnectionComplete(handle: handle, reason: 0x08))
        #expect(Self.acl(on: handle, in: links.central.takeWritten()).isEmpty)
        #expect(links.central.engine.aclQueuedCount(handle: handle) == 0, "the queue for the handle is dropped")
        #expect(links.central.engine.aclPacketsInFlight(connection: handle) == 0, "its buffers count as free again")
        guard case .success(.streamed(_, .disconnected(.connectionTimeout)))? = links.central.result(stream) else {
            Issue.record("the stream: \(String(describing: links.central.result(stream)))")
            return
        }
        guard case .failure? = links.central.result(read) else {
            Issue.record("the queued read: \(String(describing: links.central.result(read)))")
            return
        }

        // A stale Number Of Completed Packets for the handle, time passing, and requests on it.
        links.central.controller(ControllerBytes.completedPackets(handle: handle, count: UInt16(beforeEnd.count)))
        links.central.advance(by: .seconds(31))
        let late = links.central.perform(.gatt(connection: handle, .read(handle: 1)))
        _ = links.central.perform(.streamATT(
            connection: handle, ATTStream(pdu: .writeCommand, valueHandle: EngineATTStreamTests.sinkHandle)))
        #expect(Self.acl(on: handle, in: links.central.takeWritten()).isEmpty)
        guard case .failure? = links.central.result(late) else {
            Issue.record("a read on the ended handle: \(String(describing: links.central.result(late)))")
            return
        }
    }

    @Test("the peripheral's queued notifications are dropped at the end too, and the next link has every buffer")
    func peripheralNotificationsAndTheNextLink() throws {
        let sink = EngineATTStreamTests.Sink()
        var links = try EngineATTStreamTests.linked(sink: sink)
        try EngineATTStreamTests.subscribe(&links)
        let handle = links.handle
        _ = links.peripheral.perform(.streamATT(
            connection: handle, ATTStream(pdu: .notification, valueHandle: EngineATTStreamTests.notifyHandle)))
        let held = Self.acl(on: handle, in: links.peripheral.takeWritten()).count
        #expect(held > 0 && links.peripheral.engine.aclQueuedCount(handle: handle) > 0)

        links.peripheral.controller(ControllerBytes.disconnectionComplete(handle: handle, reason: 0x13))
        links.peripheral.controller(ControllerBytes.completedPackets(handle: handle, count: UInt16(held)))
        links.peripheral.advance(by: .seconds(1))
        #expect(Self.acl(on: handle, in: links.peripheral.takeWritten()).isEmpty)

        // The central ends too; on the next link a stream gets as many packets out at once as the first did.
        links.central.controller(ControllerBytes.disconnectionComplete(handle: handle, reason: 0x16))
        links.handle += 1
        _ = links.central.takeEvents()
        _ = links.peripheral.takeEvents()
        links.connect()
        try EngineATTStreamTests.subscribe(&links)
        _ = links.peripheral.perform(.streamATT(
            connection: links.handle, ATTStream(pdu: .notification, valueHandle: EngineATTStreamTests.notifyHandle)))
        #expect(Self.acl(on: links.handle, in: links.peripheral.takeWritten()).count == held,
                "the ended link's buffers came back with its Disconnection Complete")
    }
}
