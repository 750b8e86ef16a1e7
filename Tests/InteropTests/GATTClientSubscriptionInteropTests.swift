import Bluewire
import BluewireCore
import BluewireGATT
import Foundation
import Synchronization
import Testing

/// Notifications and indications from bumble's GATT server: the peripheral counts 0..<N as soon as
/// the CCCD is written, so anything lost between the write and the first iteration would show.
@Suite("GATT subscriptions against a bumble peripheral")
struct GATTClientSubscriptionInteropTests {
    static func sequenceNumber(_ notification: GATTNotification) -> Int {
        notification.value.prefix(4).reversed().reduce(0) { $0 << 8 | Int($1) }
    }

    @Test("notifications and indications arrive in order with none lost", arguments: [false, true])
    func countersArriveInOrder(indications: Bool) async throws {
        let capture = interopCapturePath(indications ? "bluewire_gatt_indicate.btsnoop" : "bluewire_gatt_notify.btsnoop")
        defer { removeTemporaryCapture(capture) }
        try await withGATTPeripheral(capture: capture, ownAddress: indications ? "C4:5A:17:00:B2:04" : "C4:5A:17:00:B2:03") { session in
            let counter = try await session.characteristic(GATTInteropDatabase.counter)
            let subscription = try await session.gatt.subscribe(to: counter, indications: indications)
            #expect(session.gatt.state == .connected(.notificationsEnabled))
            // The peripheral is already counting: wait until it has sent everything before iterating.
            let done = await session.events.first { ($0["counter_done"] as? Int) == Int(counter.valueHandle) }
            #expect(done != nil, "bumble finished sending")
            var received: [Int] = []
            for try await notification in subscription {
                #expect(notification.isIndication == indications)
                received.append(Self.sequenceNumber(notification))
                if received.count == GATTInteropDatabase.counterCount { break }
            }
            #expect(received == Array(0..<GATTInteropDatabase.counterCount))
            try await session.gatt.unsubscribe(subscription)
            let off = await session.events.first { ($0["subscribed"] as? Int) == Int(counter.valueHandle) && ($0["notify"] as? Bool) == false && ($0["indicate"] as? Bool) == false }
            #expect(off != nil, "bumble saw the CCCD cleared")
            #expect(session.gatt.state == .connected(.discoveredCharacteristic))
        }
    }

    @Test("a synchronous handler (subscribe onNotification:) gets every notification and indication in order; the subscription ends on disconnection",
          arguments: [false, true])
    func handlerGetsCountersInOrder(indications: Bool) async throws {
        try await withGATTPeripheral(ownAddress: indications ? "C4:5A:17:00:B2:06" : "C4:5A:17:00:B2:05") { session in
            let counter = try await session.characteristic(GATTInteropDatabase.counter)
            let received = Mutex<[(Int, Bool)]>([])
            let subscription = try await session.gatt.subscribe(to: counter, indications: indications) { notification in
                received.withLock { $0.append((Self.sequenceNumber(notification), notification.isIndication)) }
            }
            #expect(session.gatt.state == .connected(.notificationsEnabled))
            let done = await session.events.first { ($0["counter_done"] as? Int) == Int(counter.valueHandle) }
            #expect(done != nil, "bumble finished sending")
            // Every value was handed over before the host processed what came after it: a read
            // round trip behind the last notification proves they were all handled.
            _ = try await session.gatt.read(counter)
            let values = received.withLock { $0 }
            #expect(values.map(\.0) == Array(0..<GATTInteropDatabase.counterCount))
            #expect(values.allSatisfy { $0.1 == indications })
            // The sequence carries no values, only the end: the link's disconnection.
            try await session.host.disconnect(handle: session.connection.handle)
            await #expect(throws: GATTError.self) {
                for try await _ in subscription { Issue.record("a handler subscription yielded a value") }
            }
        }
    }

    @Test("after an MTU exchange a 244-byte notification arrives whole")
    func exchangedMTUCarriesWholeValues() async throws {
        try await withGATTPeripheral { session in
            let mtu = try await session.gatt.exchangeMTU()
            #expect(mtu >= GATTInteropDatabase.wideSize + 3)
            #expect(await session.connection.mtu == mtu)
            let wide = try await session.characteristic(GATTInteropDatabase.wide)
            let subscription = try await session.gatt.subscribe(to: wide)
            var received: [Int] = []
            for try await notification in subscription {
                #expect(notification.value.count == GATTInteropDatabase.wideSize)
                received.append(Self.sequenceNumber(notification))
                if received.count == GATTInteropDatabase.wideCount { break }
            }
            #expect(received == Array(0..<GATTInteropDatabase.wideCount))
        }
    }

    @Test("without an MTU exchange the same notifications are cut to ATT_MTU − 3 = 20 bytes")
    func defaultMTUCutsValues() async throws {
        try await withGATTPeripheral { session in
            let wide = try await session.characteristic(GATTInteropDatabase.wide)
            let subscription = try await session.gatt.subscribe(to: wide)
            var iterator = subscription.makeAsyncIterator()
            let first = try #require(try await iterator.next())
            #expect(first.value.count == 20)
        }
    }
}
