import BluewireCore
import BluewireSMP
import Testing

/// A peer's Keypress Notification (§3.5.8) fed to the session as bytes: passed on only during Passkey Entry
/// when both sides set the Keypress bit, ignored otherwise (§2.3.5.6.3), never a failure.
@Suite("SMP session: Keypress Notifications")
struct KeypressSessionTests {
    static func config(_ io: IOCapability, keypress: Bool, seed: UInt8) -> PairingConfiguration {
        var configuration = PairingConfiguration.test(io, mitm: true, seed: seed)
        configuration.keypressNotifications = keypress
        return configuration
    }

    /// Runs the exchange up to the point where the central is asked for the passkey.
    static func waitingForPasskey(centralKeypress: Bool, peripheralKeypress: Bool) -> PairingHarness {
        var h = PairingHarness(
            central: config(.keyboardOnly, keypress: centralKeypress, seed: 1),
            peripheral: config(.displayOnly, keypress: peripheralKeypress, seed: 9))
        h.enqueue(h.central.start(now: h.now), from: .central)
        while !h.queue.isEmpty {
            let (side, action) = h.queue.removeFirst()
            h.handle(action, from: side)
        }
        return h
    }

    @Test("the Keypress bit is in AuthReq when configured (§3.5.1 figure 3.3, bit 4)")
    func authReqBit() {
        let h = Self.waitingForPasskey(centralKeypress: true, peripheralKeypress: false)
        #expect(h.passkeyRequests == [.central])
        #expect(h.sent.first?.opcode == .pairingRequest && h.sent.dropFirst().first?.opcode == .pairingResponse)
        #expect(!h.peripheral.keypressNotificationsAgreed && !h.central.keypressNotificationsAgreed)
        let agreed = Self.waitingForPasskey(centralKeypress: true, peripheralKeypress: true)
        #expect(agreed.peripheral.keypressNotificationsAgreed && agreed.central.keypressNotificationsAgreed)
    }

    @Test("a peer's notification: reported when both agreed, ignored (not a failure) when not")
    func receivedNotification() {
        for agreed in [true, false] {
            var h = Self.waitingForPasskey(centralKeypress: true, peripheralKeypress: agreed)
            let actions = h.peripheral.receive([0x0E, 0x01], now: h.now)
            #expect(actions == (agreed ? [.keypress(.passkeyDigitEntered)] : []))
            // The pairing goes on: the typed passkey completes it.
            h.drain()
            #expect(h.results[.central] != nil && h.results[.peripheral] != nil)
            #expect(h.failures.isEmpty)
        }
    }

    @Test("sending: only the entering side, only before the passkey is given, only when agreed")
    func sending() {
        var h = Self.waitingForPasskey(centralKeypress: true, peripheralKeypress: true)
        #expect(h.central.keypress(.passkeyEntryStarted, now: h.now) == [.send(.keypressNotification(.passkeyEntryStarted))])
        #expect(h.peripheral.keypress(.passkeyEntryStarted, now: h.now).isEmpty)
        h.drain()
        #expect(h.central.keypress(.passkeyDigitEntered, now: h.now).isEmpty)
        var off = Self.waitingForPasskey(centralKeypress: true, peripheralKeypress: false)
        #expect(off.central.keypress(.passkeyEntryStarted, now: off.now).isEmpty)
        off.drain()
        #expect(off.results[.central] != nil)
    }
}
