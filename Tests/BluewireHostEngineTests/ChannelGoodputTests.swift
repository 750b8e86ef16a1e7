import BluewireCore
import BluewireHostEngine
import BluewireTesting
import Testing

/// Goodput of an LE credit based channel against the physical limit of the virtual link's radio
/// model (LE 2M, 251-octet PDUs), and against GATT notifications on the same link: two engines on a
/// `VirtualLink` with radio timing (`LinkGoodput`), counted in virtual time, so every run gives the
/// same figures. The limit is computed from the link's own timing (`LinkPayloadLimit`).
@Suite("Host engine: channel goodput on the virtual radio")
struct ChannelGoodputTests {
    /// 30 ms, the engine's default minimum connection interval: 21 exchanges of 1,392 µs per event.
    static let interval: UInt16 = 24

    @Test("the limit follows from the timing model: 1,392 µs per exchange, 21 per 30 ms event, 1,383.2 kbit/s")
    func limitFormula() {
        let limit = LinkPayloadLimit(interval: Self.interval)
        #expect(limit.exchangeMicroseconds == 1_048 + 150 + 44 + 150)
        #expect(limit.exchangesPerEvent == 21)
        #expect(abs(limit.kilobitsPerSecond - 1_383.2) < 0.01)
        #expect(abs(limit.backToBackKilobitsPerSecond - 1_419.54) < 0.01)
    }

    @Test("CoC at MTU 247 (MPS 247, 245-octet SDUs: one full 251-octet K-frame each) reaches ≥ 98 % of the limit and beats notifications at ATT_MTU 247")
    func channelVersusNotificationsAtMTU247() throws {
        let limit = LinkPayloadLimit(interval: Self.interval).kilobitsPerSecond
        let channel = try LinkGoodput.channel(interval: Self.interval, mtu: 247, credits: 64, sduLength: 245)
        let notifications = try LinkGoodput.notifications(interval: Self.interval, mtu: 247)
        #expect(channel.kilobitsPerSecond >= limit * 0.98, "CoC \(channel.kilobitsPerSecond) kbit/s, limit \(limit)")
        #expect(channel.kilobitsPerSecond <= limit, "CoC \(channel.kilobitsPerSecond) kbit/s above the limit \(limit)")
        #expect(channel.kilobitsPerSecond > notifications.kilobitsPerSecond,
                "CoC \(channel.kilobitsPerSecond) kbit/s, notifications \(notifications.kilobitsPerSecond)")
        // Notifications carry 244 of the 247 octets a PDU has room for: at best 244/247 of the limit.
        #expect(notifications.kilobitsPerSecond <= limit * 244 / 247 + 0.01)
    }

    @Test("CoC at MTU 512 (492-octet SDUs in two full K-frames) against notifications at ATT_MTU 512 (three PDUs each)")
    func channelVersusNotificationsAtMTU512() throws {
        let limit = LinkPayloadLimit(interval: Self.interval).kilobitsPerSecond
        let channel = try LinkGoodput.channel(interval: Self.interval, mtu: 512, credits: 64, sduLength: 492)
        let notifications = try LinkGoodput.notifications(interval: Self.interval, mtu: 512)
        #expect(channel.kilobitsPerSecond >= limit * 0.98, "CoC \(channel.kilobitsPerSecond) kbit/s, limit \(limit)")
        #expect(channel.kilobitsPerSecond > notifications.kilobitsPerSecond,
                "CoC \(channel.kilobitsPerSecond) kbit/s, notifications \(notifications.kilobitsPerSecond)")
    }

    @Test("the measurement is deterministic: the same octets twice")
    func deterministic() throws {
        let first = try LinkGoodput.channel(interval: Self.interval, mtu: 247, credits: 64, sduLength: 245, measure: .milliseconds(300))
        let second = try LinkGoodput.channel(interval: Self.interval, mtu: 247, credits: 64, sduLength: 245, measure: .milliseconds(300))
        #expect(first == second)
        #expect(first.octets > 0)
    }
}
