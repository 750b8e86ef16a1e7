import BluewireCore
import BluewireHCI
import BluewireHostEngine
import BluewireL2CAP
import BluewireTesting
import Testing

/// A channel's orderly close is a socket's close: every SDU sent goes out, K-frame by K-frame as the
/// peer's credits allow, and only then the Disconnection Request (Core Vol 3 Part A §4.6, §10.1).
/// The scene is the one where the kernel's l2test lost the last SDU (issue: 261,632 of 262,144
/// octets): one controller ACL buffer of 27 octets, Number Of Completed Packets only at the end of
/// each connection event (late, as btvirt's under TCG), the kernel's MPS 188 and 3 credits. The
/// sender waits for each SDU's send to complete before the next, as `bluewire l2cap connect` does,
/// then closes.
@Suite("Host engine: a channel's orderly close sends everything first")
struct EngineChannelOrderlyCloseTests {
    static let spsm = SPSM(0x0081)
    static let sduLength = 512
    static let sduCount = 512

    static func sdu(_ index: Int) -> [UInt8] { (0..<sduLength).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) } }

    /// Two engines on the radio-timed virtual link, the peripheral serving `spsm` as the kernel does
    /// (MTU 512, MPS 188, 3 credits); returns the scene, the central's handle and the open channel.
    static func scene() throws -> (EnginesOnVirtualLink, UInt16, HostChannel) {
        var scene = try EnginesOnVirtualLink(
            timing: .radio(completedPacketsReporting: .atEndOfConnectionEvent),
            controller: { $0.leBufferSize = VirtualController.BufferSize(packetLength: 27, packetCount: 1) })
        let register = scene.perform(.registerServer(
            spsm: spsm, parameters: CreditBasedChannelParameters(mtu: 512, mps: 188, initialCredits: 3), security: .none), on: 1)
        #expect(scene.peripheral.result(register) == .success(.done))
        // 7.5 ms connection events: completions come milliseconds after the packet went.
        let handle = try scene.connect(LEConnectionParameters(connectionIntervalMin: 6, connectionIntervalMax: 6))
        let open = scene.perform(.openChannel(connection: handle, spsm: spsm, parameters: CreditBasedChannelParameters()), on: 0)
        try scene.run(until: { $0.central.result(open) != nil }, within: .seconds(2))
        guard case .success(.channelOpened(let channel))? = scene.central.result(open) else {
            throw EngineLinkError.setupFailed("open: \(String(describing: scene.central.result(open)))")
        }
        #expect(channel.peerMPS == 188 && channel.peerCredits == 3)
        return (scene, handle, channel)
    }

    /// What the peripheral saw on its channels: every SDU's octets, and how the channel ended.
    struct Received {
        var sdus: [[UInt8]] = []
        var closedAfter: Int?
        var closeReason: CreditBasedDisconnectReason?

        mutating func take(_ events: [HostEngineEvent]) {
            for event in events {
                switch event {
                case .channelSDU(_, _, let sdu): sdus.append(sdu)
                case .channelClosed(_, _, let reason):
                    closedAfter = sdus.count
                    closeReason = reason
                default: break
                }
            }
        }

        var octets: Int { sdus.reduce(0) { $0 + $1.count } }
    }

    @Test("262,144 octets sent SDU by SDU, then an orderly close: all of them arrive before the Disconnection Request")
    func everyOctetArrivesBeforeTheClose() throws {
        var (scene, handle, channel) = try Self.scene()
        var received = Received()
        for index in 0..<Self.sduCount {
            let send = scene.perform(.sendSDU(connection: handle, cid: channel.cid, Self.sdu(index)), on: 0)
            try scene.run(until: { $0.central.result(send) != nil }, within: .seconds(30))
            #expect(scene.central.result(send) == .success(.done), "SDU \(index)")
            received.take(scene.peripheral.takeEvents())
        }
        let close = scene.perform(.closeChannel(connection: handle, cid: channel.cid), on: 0)
        try scene.run(until: { $0.central.result(close) != nil }, within: .seconds(30))
        #expect(scene.central.result(close) == .success(.done))
        received.take(scene.peripheral.takeEvents())
        #expect(received.octets == Self.sduCount * Self.sduLength, "octets received: \(received.octets) of \(Self.sduCount * Self.sduLength)")
        #expect(received.sdus == (0..<Self.sduCount).map(Self.sdu))
        #expect(received.closedAfter == Self.sduCount, "the peer closed the channel after \(String(describing: received.closedAfter)) SDUs")
        #expect(received.closeReason == .remote)
    }

    @Test("SDUs queued for credits when the orderly close is asked: they go first, the close waits for them, new sends are refused")
    func queuedSDUsGoBeforeTheClose() throws {
        var (scene, handle, channel) = try Self.scene()
        // Ten SDUs at once: 30 K-frames for 3 credits, so most wait in the channel for credits.
        let sends = (0..<10).map { scene.perform(.sendSDU(connection: handle, cid: channel.cid, Self.sdu($0)), on: 0) }
        let close = scene.perform(.closeChannel(connection: handle, cid: channel.cid), on: 0)
        let late = scene.perform(.sendSDU(connection: handle, cid: channel.cid, Self.sdu(99)), on: 0)
        #expect(scene.central.result(late) == .failure(.channel(.channelNotOpen(channel.cid))), "a send after the close is refused")
        #expect(scene.central.result(close) == nil, "the close waits for the queued SDUs")
        try scene.run(until: { $0.central.result(close) != nil }, within: .seconds(30))
        for (index, send) in sends.enumerated() { #expect(scene.central.result(send) == .success(.done), "SDU \(index)") }
        #expect(scene.central.result(close) == .success(.done))
        var received = Received()
        received.take(scene.peripheral.takeEvents())
        #expect(received.sdus == (0..<10).map(Self.sdu))
        #expect(received.closedAfter == 10)
    }

    @Test("an abortive close drops what waits for credits, says so to each send, and disconnects at once")
    func abortiveCloseDropsTheQueue() throws {
        var (scene, handle, channel) = try Self.scene()
        let sends = (0..<10).map { scene.perform(.sendSDU(connection: handle, cid: channel.cid, Self.sdu($0)), on: 0) }
        let abort = scene.perform(.closeChannel(connection: handle, cid: channel.cid, abortive: true), on: 0)
        try scene.run(until: { $0.central.result(abort) != nil }, within: .seconds(30))
        #expect(scene.central.result(abort) == .success(.done))
        // The first SDU had the credits for its three K-frames; the rest waited and were dropped.
        #expect(scene.central.result(sends[0]) == .success(.done))
        for send in sends.dropFirst() { #expect(scene.central.result(send) == .failure(.channelClosed(.local))) }
        var received = Received()
        received.take(scene.peripheral.takeEvents())
        #expect(received.sdus.count <= 1)
        #expect(received.closeReason == .remote)
    }
}
