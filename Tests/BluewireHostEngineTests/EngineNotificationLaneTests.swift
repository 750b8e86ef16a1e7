import BluewireCore
import BluewireHCI
import BluewireHostEngine
import Testing

/// The notification lane (HostEngine+NotificationLane): notifications that arrive while no other
/// output waits go out as small values through `nextNotification`, and the order of everything the
/// engine hands out stays the order in which it happened.
@Suite("Host engine: the notification lane keeps the order of outputs")
struct EngineNotificationLaneTests {
    static let link = EngineATTPDURequestTests.link

    static func notification(_ value: UInt8) -> HCIPacket {
        ControllerBytes.att(handle: link, [0x1B, 0x03, 0x00, value])
    }

    /// Notification 1, then the peer's Read Request (our server answers it: a packet to send), then
    /// notification 2, all received before anything is drained. Our empty database refuses the read:
    /// an event and the Error Response to send.
    static func engineWithMixedOutputs() throws -> HostEngine {
        var (driver, _) = try EngineATTPDURequestTests.connected()
        driver.drain()
        _ = driver.takeWritten()
        var engine = driver.engine
        engine.receive(notification(1), now: driver.now)
        engine.receive(ControllerBytes.att(handle: link, [0x0A, 0x01, 0x00]), now: driver.now)
        engine.receive(notification(2), now: driver.now)
        return engine
    }

    /// A readable name for an output: N1, N2 for the notifications, "send" for a packet.
    static func describe(_ output: HostEngineOutput) -> String {
        switch output {
        case .event(.notification(link, 0x0003, let value, false)): "N\(value.first ?? 0)"
        case .send: "send"
        case .event(.serverRequestRefused): "refused"
        default: "\(output)"
        }
    }

    @Test("nextOutput alone hands out notification 1, the server's refusal and answer, notification 2, in that order")
    func nextOutputOrder() throws {
        var engine = try Self.engineWithMixedOutputs()
        var order: [String] = []
        while let output = engine.nextOutput() { order.append(Self.describe(output)) }
        #expect(order == ["N1", "refused", "send", "N2"])
    }

    @Test("taking the lane first gives the same order: only the notification that came before every other output is on it")
    func laneFirstOrder() throws {
        var engine = try Self.engineWithMixedOutputs()
        var order: [String] = []
        var fromLane: [UInt8] = []
        while true {
            while let notification = engine.nextNotification() {
                order.append("N\(notification.value.first ?? 0)")
                fromLane.append(notification.value.first ?? 0)
            }
            guard let output = engine.nextOutput() else { break }
            order.append(Self.describe(output))
        }
        #expect(order == ["N1", "refused", "send", "N2"])
        #expect(fromLane == [1])
    }

    @Test("takeNotifications takes the lane a batch at a time in the order nextNotification gives, and the outputs keep theirs")
    func batchedLaneOrder() throws {
        var engine = try Self.engineWithMixedOutputs()
        var order: [String] = []
        var batch: [HostNotification] = []
        var batches = 0
        while true {
            while true {
                engine.takeNotifications(into: &batch)
                if batch.isEmpty { break }
                batches += 1
                for notification in batch { order.append("N\(notification.value.first ?? 0)") }
            }
            guard let output = engine.nextOutput() else { break }
            order.append(Self.describe(output))
        }
        #expect(order == ["N1", "refused", "send", "N2"])
        #expect(batches == 1)
    }

    @Test("a burst of notifications comes out of takeNotifications as one batch, and a second take finds the lane empty")
    func burstInOneBatch() throws {
        var (driver, _) = try EngineATTPDURequestTests.connected()
        driver.drain()
        var engine = driver.engine
        for value in UInt8(1)...5 { engine.receive(Self.notification(value), now: driver.now) }
        var batch: [HostNotification] = [HostNotification(connection: 9, attribute: 9, value: [9], isIndication: true)]
        engine.takeNotifications(into: &batch)
        #expect(batch.map { $0.value.first ?? 0 } == [1, 2, 3, 4, 5])
        #expect(batch.allSatisfy { $0.connection == Self.link && $0.attribute == 0x0003 && !$0.isIndication })
        engine.takeNotifications(into: &batch)
        #expect(batch.isEmpty)
        #expect(engine.nextNotification() == nil)
        #expect(engine.nextOutput() == nil)
    }

    @Test("a stream of notifications with nothing else waiting goes entirely through the lane")
    func streamOnLane() throws {
        var (driver, _) = try EngineATTPDURequestTests.connected()
        driver.drain()
        var engine = driver.engine
        for value in UInt8(1)...5 { engine.receive(Self.notification(value), now: driver.now) }
        var values: [UInt8] = []
        while let notification = engine.nextNotification() { values.append(notification.value.first ?? 0) }
        #expect(values == [1, 2, 3, 4, 5])
        #expect(engine.nextOutput() == nil)
    }
}
