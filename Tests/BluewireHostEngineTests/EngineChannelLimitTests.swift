import BluewireCore
import BluewireHostEngine
import BluewireL2CAP
import BluewireTesting
import Testing

/// A server that serves a limited number of channels (`l2cap listen` serves one) answers an
/// Enhanced Credit Based Connection Request for more with only the channels it will serve, the
/// others refused in the same response with "Some connections refused – insufficient resources
/// available" (Core Vol 3 Part A §4.26, result 0x0004, destination CID 0): the peer never sends on a
/// channel nobody reads. Two engines on the virtual link; the central asks for five.
@Suite("Host engine: a server with a channel limit answers an enhanced request with what it serves")
struct EngineChannelLimitTests {
    static let spsm = SPSM(0x0080)

    static func scene(maximumChannels: Int?) throws -> (EnginesOnVirtualLink, UInt16) {
        var scene = try EnginesOnVirtualLink(timing: .immediate, recordsPackets: true)
        scene.perform(.registerServer(
            spsm: spsm, parameters: CreditBasedChannelParameters(mtu: 512, mps: 247, initialCredits: 8), security: .none,
            maximumChannels: maximumChannels), on: 1)
        let handle = try scene.connect()
        return (scene, handle)
    }

    /// The Credit Based Connection Response (code 0x18) the peripheral sent: its result and destination CIDs.
    static func response(in scene: EnginesOnVirtualLink) -> (result: UInt16, destinations: [UInt16])? {
        for record in scene.packets where record.station == 1 && record.direction == .hostToController && record.packet.type == .acl {
            let bytes = Array(record.packet.payload)
            // ACL header (4), L2CAP header (4) on CID 0x0005, then code, identifier, length.
            guard bytes.count >= 12 + 8, bytes[6] == 0x05, bytes[7] == 0x00, bytes[8] == 0x18 else { continue }
            let body = Array(bytes[12...])
            let result = UInt16(body[6]) | UInt16(body[7]) << 8
            let cids = stride(from: 8, to: body.count - 1, by: 2).map { UInt16(body[$0]) | UInt16(body[$0 + 1]) << 8 }
            return (result, cids)
        }
        return nil
    }

    @Test("five channels asked of a one-channel server: one opens, four are refused with 0x0004 in the same response")
    func onlyTheServedChannelOpens() throws {
        var (scene, handle) = try Self.scene(maximumChannels: 1)
        let open = scene.perform(.openEnhancedChannels(
            connection: handle, spsm: Self.spsm, count: 5, parameters: CreditBasedChannelParameters(mtu: 512, mps: 247, initialCredits: 8)), on: 0)
        try scene.run(until: { $0.central.result(open) != nil }, within: .seconds(2))
        guard case .success(.channelsOpened(let opened))? = scene.central.result(open) else {
            Issue.record("open: \(String(describing: scene.central.result(open)))")
            return
        }
        #expect(opened.count == 1)
        let response = try #require(Self.response(in: scene))
        #expect(response.result == CreditBasedConnectionResult.someRefusedInsufficientResources.rawValue)
        #expect(response.destinations.count == 5)
        #expect(response.destinations.filter { $0 == 0 }.count == 4)
        let served = scene.peripheral.takeEvents().compactMap { event -> HostChannel? in
            if case .channelOpened(let channel) = event { return channel }
            return nil
        }
        #expect(served.count == 1, "the peripheral holds exactly the channel it serves")
        // The one channel carries data.
        let channel = try #require(opened.first)
        let send = scene.perform(.sendSDU(connection: handle, cid: channel.cid, Array("hello".utf8)), on: 0)
        try scene.run(until: { $0.central.result(send) != nil }, within: .seconds(2))
        #expect(scene.peripheral.takeEvents().contains { if case .channelSDU(_, _, let sdu) = $0 { return sdu == Array("hello".utf8) } else { return false } })
    }

    @Test("without a limit the five channels all open")
    func withoutALimitAllOpen() throws {
        var (scene, handle) = try Self.scene(maximumChannels: nil)
        let open = scene.perform(.openEnhancedChannels(
            connection: handle, spsm: Self.spsm, count: 5, parameters: CreditBasedChannelParameters(mtu: 512, mps: 247, initialCredits: 8)), on: 0)
        try scene.run(until: { $0.central.result(open) != nil }, within: .seconds(2))
        guard case .success(.channelsOpened(let opened))? = scene.central.result(open) else {
            Issue.record("open: \(String(describing: scene.central.result(open)))")
            return
        }
        #expect(opened.count == 5)
    }

    @Test("an LE Credit Based request beyond the limit is refused with No Resources Available (0x0004)")
    func leRequestBeyondTheLimitIsRefused() throws {
        var (scene, handle) = try Self.scene(maximumChannels: 1)
        let first = scene.perform(.openChannel(connection: handle, spsm: Self.spsm, parameters: CreditBasedChannelParameters()), on: 0)
        let second = scene.perform(.openChannel(connection: handle, spsm: Self.spsm, parameters: CreditBasedChannelParameters()), on: 0)
        try scene.run(until: { $0.central.result(first) != nil && $0.central.result(second) != nil }, within: .seconds(2))
        guard case .success(.channelOpened)? = scene.central.result(first) else {
            Issue.record("first: \(String(describing: scene.central.result(first)))")
            return
        }
        #expect(scene.central.result(second) == .failure(.channelRefused(.refused(.noResourcesAvailable))))
    }
}
