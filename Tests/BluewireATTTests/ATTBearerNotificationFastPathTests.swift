import BluewireCore
import Testing

@testable import BluewireATT

/// `ATTBearer.receiveNotification`: the notification fast path takes exactly the PDUs `receive`
/// would only have turned into `.notification`, and leaves everything else to `receive`.
/// True when the fast path declines `pdu` (returns nil).
private func declines(_ bearer: inout ATTBearer, _ pdu: ArraySlice<UInt8>, now: MonotonicInstant) -> Bool {
    bearer.receiveNotification(pdu, now: now) == nil
}

@Suite("ATT bearer: the notification fast path")
struct ATTBearerNotificationFastPathTests {
    static let now = at(seconds: 1)

    @Test("a Handle Value Notification gives its handle and value, and leaves no output behind")
    func takesNotification() throws {
        var bearer = ATTBearer()
        let pdu: [UInt8] = [0x1B, 0x2A, 0x01, 0xDE, 0xAD]
        let result = bearer.receiveNotification(pdu[...], now: Self.now)
        let taken = try #require(result)
        #expect(taken.handle == 0x012A)
        #expect(Array(taken.value) == [0xDE, 0xAD])
        #expect(bearer.nextOutput() == nil)
    }

    @Test("an empty value is a notification too (opcode and handle only)")
    func emptyValue() throws {
        var bearer = ATTBearer()
        let result = bearer.receiveNotification([0x1B, 0x03, 0x00][...], now: Self.now)
        let taken = try #require(result)
        #expect(taken.handle == 0x0003)
        #expect(taken.value.isEmpty)
    }

    @Test("what the fast path gives equals what receive emits for the same PDU")
    func matchesReceive() throws {
        let pdu: [UInt8] = [0x1B, 0x10, 0x00, 1, 2, 3]
        var fast = ATTBearer()
        let result = fast.receiveNotification(pdu[...], now: Self.now)
        let taken = try #require(result)
        var slow = ATTBearer()
        slow.receive(pdu[...], now: Self.now)
        #expect(drain(&slow).events == [.notification(handle: taken.handle, value: taken.value)])
    }

    @Test("a truncated notification, an indication, a request or an empty PDU is left to receive")
    func othersLeftToReceive() {
        var bearer = ATTBearer()
        #expect(declines(&bearer, [0x1B, 0x03][...], now: Self.now))
        #expect(declines(&bearer, [0x1D, 0x03, 0x00, 0x01][...], now: Self.now))
        #expect(declines(&bearer, [0x0A, 0x03, 0x00][...], now: Self.now))
        #expect(declines(&bearer, [][...], now: Self.now))
        #expect(bearer.nextOutput() == nil)
    }

    @Test("behind an output not yet taken, the notification goes through receive, so it does not overtake it")
    func behindPendingOutput() throws {
        var bearer = ATTBearer()
        // A peer's Exchange MTU Request: the bearer answers it (an output to send).
        bearer.receive([0x02, 0x00, 0x02][...], now: Self.now)
        #expect(declines(&bearer, [0x1B, 0x03, 0x00, 0x07][...], now: Self.now))
        bearer.receive([0x1B, 0x03, 0x00, 0x07][...], now: Self.now)
        let (sent, events) = drain(&bearer)
        #expect(sent.count == 1)
        #expect(events.last == .notification(handle: 0x0003, value: [0x07]))
    }

    @Test("when a request has timed out, receive closes the bearer first; the fast path declines, and after it nothing is taken")
    func timedOutRequest() throws {
        var bearer = ATTBearer()
        _ = try bearer.send(request: .readRequest(handle: 0x0003), now: Self.now)
        _ = drain(&bearer)
        let late = at(seconds: 40)
        #expect(declines(&bearer, [0x1B, 0x03, 0x00, 0x07][...], now: late))
        bearer.receive([0x1B, 0x03, 0x00, 0x07][...], now: late)
        #expect(bearer.closeReason != nil)
        #expect(!drain(&bearer).events.contains(.notification(handle: 0x0003, value: [0x07])))
        #expect(declines(&bearer, [0x1B, 0x03, 0x00, 0x07][...], now: late))
    }

    @Test("while a request is outstanding but not yet due, a notification still takes the fast path (§3.3.2)")
    func duringOutstandingRequest() throws {
        var bearer = ATTBearer()
        _ = try bearer.send(request: .readRequest(handle: 0x0003), now: Self.now)
        _ = drain(&bearer)
        let result = bearer.receiveNotification([0x1B, 0x05, 0x00, 0x01][...], now: at(seconds: 2))
        let taken = try #require(result)
        #expect(taken.handle == 0x0005)
        #expect(bearer.pendingRequestCount == 1)
    }
}
