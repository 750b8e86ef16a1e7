import BluewireCore
import BluewireHCI
import Testing

@testable import BluewireL2CAP

@Suite struct ACLCreditManagerTests {
    func packets(_ handle: UInt16, _ count: Int) -> [ACLPacket] {
        (0..<count).map { ACLPacket(handle: handle, packetBoundary: $0 == 0 ? .firstNonFlushable : .continuingFragment, data: [UInt8($0)][...]) }
    }

    func tags(_ sent: [ACLWirePacket]) -> [String] { sent.map { "\($0.handle):\($0.data.first ?? 0)" } }

    @Test func sendsNoMorePacketsThanTheControllerHasBuffers() {
        var manager = ACLCreditManager(totalBuffers: 3)
        manager.enqueue(handle: 1, packets(1, 5))
        #expect(tags(manager.nextPacketsToSend()) == ["1:0", "1:1", "1:2"])
        #expect(manager.nextPacketsToSend().isEmpty, "no credit left")
        #expect(manager.availableCredits == 0 && manager.inFlightCount(handle: 1) == 3 && manager.queuedCount(handle: 1) == 2)
    }

    @Test func completedPacketsReturnCreditsAndReleaseTheQueue() {
        var manager = ACLCreditManager(totalBuffers: 2)
        manager.enqueue(handle: 1, packets(1, 4))
        _ = manager.nextPacketsToSend()
        #expect(manager.completed(handle: 1, count: 1) == 1)
        #expect(tags(manager.nextPacketsToSend()) == ["1:2"])
        manager.completed(handle: 1, count: 2)
        #expect(tags(manager.nextPacketsToSend()) == ["1:3"])
    }

    @Test func connectionsShareBuffersRoundRobin() {
        var manager = ACLCreditManager(totalBuffers: 4)
        manager.enqueue(handle: 1, packets(1, 6))
        manager.enqueue(handle: 2, packets(2, 2))
        manager.enqueue(handle: 3, packets(3, 1))
        #expect(tags(manager.nextPacketsToSend()) == ["1:0", "2:0", "3:0", "1:1"])
        manager.completed(handle: 1, count: 2)
        manager.completed(handle: 2, count: 1)
        manager.completed(handle: 3, count: 1)
        // The turn continues after handle 1, so handle 2 goes first this time.
        #expect(tags(manager.nextPacketsToSend()) == ["2:1", "1:2", "1:3", "1:4"])
    }

    @Test func disconnectionReclaimsInFlightCreditsAndDropsTheQueue() {
        var manager = ACLCreditManager(totalBuffers: 3)
        manager.enqueue(handle: 1, packets(1, 5))
        manager.enqueue(handle: 2, packets(2, 2))
        _ = manager.nextPacketsToSend()
        #expect(manager.availableCredits == 0)
        #expect(manager.disconnected(handle: 1) == 3, "three packets of handle 1 were still queued")
        #expect(manager.inFlightCount(handle: 1) == 0 && manager.queuedCount(handle: 1) == 0)
        #expect(tags(manager.nextPacketsToSend()) == ["2:1"])
        // A late Number Of Completed Packets for the dead handle must not create credits.
        #expect(manager.completed(handle: 1, count: 2) == 0)
        #expect(manager.availableCredits == 1)
    }

    @Test func completedCountsBeyondWhatIsInFlightAreClamped() {
        var manager = ACLCreditManager(totalBuffers: 2)
        manager.enqueue(handle: 5, packets(5, 1))
        _ = manager.nextPacketsToSend()
        #expect(manager.completed(handle: 5, count: 10) == 1)
        #expect(manager.availableCredits == 2)
    }

    @Test func resetForgetsEverything() {
        var manager = ACLCreditManager(totalBuffers: 2)
        manager.enqueue(handle: 5, packets(5, 4))
        _ = manager.nextPacketsToSend()
        manager.reset(totalBuffers: 8)
        #expect(manager.totalBuffers == 8 && manager.availableCredits == 8 && manager.queuedCount(handle: 5) == 0)
    }
}
