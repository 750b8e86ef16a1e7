import BluewireCore
import BluewireHCI
import BluewireTesting
import Synchronization
import PeerTestSupport
import Testing

/// An HCI ACL packet from a host: handle 0x0040 unless given, PB 0b00 (first, non-flushable) or 0b01.
func aclPacket(handle: UInt16 = 0x40, continuation: Bool = false, _ data: [UInt8]) -> HCIPacket {
    let packet = ACLPacket(
        handle: handle, packetBoundary: continuation ? .continuingFragment : .firstNonFlushable, data: data[...])
    return HCIPacket(type: .acl, payload: packet.encode())
}

/// A basic L2CAP frame on the ATT channel (CID 4) with `count` payload octets 0, 1, 2, …
func l2capFrame(payload count: Int) -> [UInt8] {
    [UInt8(count & 0xFF), UInt8(count >> 8), 0x04, 0x00] + (0..<count).map { UInt8(truncatingIfNeeded: $0) }
}

/// Number Of Completed Packets for handle 0x0040.
func nocpEvent(_ count: UInt8, handle: UInt8 = 0x40) -> String { "04 13 05 01 \(hexString([handle])) 00 \(hexString([count])) 00" }

/// An ACL packet as a controller delivers it: handle 0x0040, PB 0b10 (start) or 0b01 (continuation).
func deliveredACL(start: Bool, _ data: ArraySlice<UInt8>) -> String {
    let flags = start ? "40 20" : "40 10"
    return "02 \(flags) \(hexString([UInt8(data.count & 0xFF), UInt8(data.count >> 8)], separator: " ")) \(hexString(data, separator: " "))"
        .trimmingSuffix()
}

extension String {
    /// Without a trailing space (left by empty data).
    func trimmingSuffix() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}

@Suite("VirtualController ACL data")
struct VirtualControllerACLTests {
    @Test("ACL flows both ways: the peer host receives it and the sender gets Number Of Completed Packets")
    func exchangeBothWays() {
        let scene = AdvertisingScene.connected()
        let request = l2capFrame(payload: 5)
        #expect(hexLines(scene.central.receive(hostPacket: aclPacket(request))) == [nocpEvent(1)])
        #expect(hexLines(scene.peripheral.takeOutput()) == [deliveredACL(start: true, request[...])])
        let response = l2capFrame(payload: 3)
        #expect(hexLines(scene.peripheral.receive(hostPacket: aclPacket(response))) == [nocpEvent(1)])
        #expect(hexLines(scene.central.takeOutput()) == [deliveredACL(start: true, response[...])])
        #expect(scene.central.aclBuffersInUse == 0 && scene.central.violations.isEmpty)
    }

    @Test("without data length extension the link layer cuts a packet into 27-octet PDUs, each delivered on its own")
    func segmentationIntoLinkLayerPDUs() {
        let scene = AdvertisingScene.connected()
        let frame = l2capFrame(payload: 56)
        #expect(hexLines(scene.central.receive(hostPacket: aclPacket(frame))) == [nocpEvent(1)])
        #expect(hexLines(scene.peripheral.takeOutput()) == [
            deliveredACL(start: true, frame[0..<27]), deliveredACL(start: false, frame[27..<54]), deliveredACL(start: false, frame[54...]),
        ])
    }

    @Test("host fragments keep their boundaries: each is segmented separately and completed separately")
    func hostFragments() {
        let scene = AdvertisingScene.connected()
        let frame = l2capFrame(payload: 56)
        #expect(hexLines(scene.central.receive(hostPacket: aclPacket(Array(frame[0..<20])))) == [nocpEvent(1)])
        #expect(hexLines(scene.central.receive(hostPacket: aclPacket(continuation: true, Array(frame[20...])))) == [nocpEvent(1)])
        #expect(hexLines(scene.peripheral.takeOutput()) == [
            deliveredACL(start: true, frame[0..<20]), deliveredACL(start: false, frame[20..<47]), deliveredACL(start: false, frame[47...]),
        ])
    }

    @Test("after a data length update to 251 octets the same PDU arrives in one packet")
    func dataLengthExtensionAvoidsSegmentation() {
        let scene = AdvertisingScene.connected()
        for controller in [scene.central, scene.peripheral] {
            controller.receive(hostPacket: HCICommand.leSetDataLength(LESetDataLength(connectionHandle: 0x40)).packet)
        }
        _ = scene.central.takeOutput()
        _ = scene.peripheral.takeOutput()
        let frame = l2capFrame(payload: 247)
        #expect(hexLines(scene.central.receive(hostPacket: aclPacket(frame))) == [nocpEvent(1)])
        #expect(hexLines(scene.peripheral.takeOutput()) == [deliveredACL(start: true, frame[...])])
    }

    @Test("packets to the host never exceed the receiving controller's own LE buffer, even with 251-octet PDUs")
    func deliveryRespectsReceiverBuffer() {
        let scene = AdvertisingScene.connected(peripheral: { $0.leBufferSize = .init(packetLength: 100, packetCount: 4) })
        for controller in [scene.central, scene.peripheral] {
            controller.receive(hostPacket: HCICommand.leSetDataLength(LESetDataLength(connectionHandle: 0x40)).packet)
        }
        _ = scene.central.takeOutput()
        _ = scene.peripheral.takeOutput()
        #expect(scene.link.connections.first?.centralToPeripheralOctets == 251)
        let frame = l2capFrame(payload: 247)
        #expect(hexLines(scene.central.receive(hostPacket: aclPacket(frame))) == [nocpEvent(1)])
        #expect(hexLines(scene.peripheral.takeOutput()) == [
            deliveredACL(start: true, frame[0..<100]), deliveredACL(start: false, frame[100..<200]),
            deliveredACL(start: false, frame[200...]),
        ])
    }

    @Test("a controller configured like bumble delivers each L2CAP PDU whole, however it was cut")
    func wholePDUDelivery() {
        let scene = AdvertisingScene.connected(peripheral: { $0.aclDelivery = .wholeL2CAPPDUs })
        let frame = l2capFrame(payload: 100)
        scene.central.receive(hostPacket: aclPacket(Array(frame[0..<30])))
        #expect(scene.peripheral.takeOutput().isEmpty, "incomplete PDU held back")
        scene.central.receive(hostPacket: aclPacket(continuation: true, Array(frame[30...])))
        #expect(hexLines(scene.peripheral.takeOutput()) == [deliveredACL(start: true, frame[...])])
    }

    @Test("a host exceeding the LE buffer count gets Data Buffer Overflow and a recorded violation; buffers free at disconnection")
    func bufferOverflow() {
        let scene = AdvertisingScene.connected(configure: { $0.leBufferSize = .init(packetLength: 27, packetCount: 2) })
        let reported = SendableRecorder<VirtualController.HostViolation>()
        scene.central.setViolationHandler { reported.append($0) }
        // A lost link sends nothing, so the buffers stay full.
        scene.central.loseAllLinks()
        let frame = l2capFrame(payload: 10)
        #expect(scene.central.receive(hostPacket: aclPacket(frame)).isEmpty)
        #expect(scene.central.receive(hostPacket: aclPacket(frame)).isEmpty)
        #expect(scene.central.aclBuffersInUse == 2)
        #expect(hexLines(scene.central.receive(hostPacket: aclPacket(frame))) == ["04 1a 01 01"])
        #expect(scene.central.violations == [.aclBufferOverflow(handle: 0x40, buffersInUse: 2)])
        #expect(reported.values == scene.central.violations)
        scene.link.clock.advance(by: .seconds(5))
        #expect(hexLines(scene.central.takeOutput()) == ["04 05 04 00 40 00 08"])
        #expect(scene.central.aclBuffersInUse == 0, "packets never sent are flushed with the connection")
        #expect(scene.peripheral.takeOutput() == [HCIPacket(type: .event, payload: hexBytes("05 04 00 40 00 08"))])
    }

    @Test("a packet longer than the LE buffer, or on an unknown handle, is dropped and recorded")
    func oversizedAndUnknownHandle() {
        let scene = AdvertisingScene.connected(configure: { $0.leBufferSize = .init(packetLength: 27, packetCount: 4) })
        #expect(scene.central.receive(hostPacket: aclPacket(l2capFrame(payload: 24))).isEmpty)
        #expect(scene.central.receive(hostPacket: aclPacket(handle: 0x77, l2capFrame(payload: 2))).isEmpty)
        #expect(scene.central.receive(hostPacket: HCIPacket(type: .acl, payload: [0x40, 0x00, 0x09, 0x00, 0x01])).isEmpty)
        #expect(scene.central.violations == [
            .aclPacketTooLong(handle: 0x40, length: 28, maximum: 27), .aclUnknownHandle(handle: 0x77, payload: l2capFrame(payload: 2)),
            .malformedACLPacket(bytes: [0x40, 0x00, 0x09, 0x00, 0x01]),
        ])
        #expect(scene.peripheral.takeOutput().isEmpty)
        // PB 0b10 is forbidden from a host on LE: recorded, yet delivered as a start.
        let flushable = ACLPacket(handle: 0x40, packetBoundary: .firstFlushable, data: l2capFrame(payload: 1)[...])
        #expect(hexLines(scene.central.receive(hostPacket: HCIPacket(type: .acl, payload: flushable.encode()))) == [nocpEvent(1)])
        #expect(scene.central.violations.last == .automaticallyFlushableOnLE(handle: 0x40))
        #expect(hexLines(scene.peripheral.takeOutput()) == [deliveredACL(start: true, l2capFrame(payload: 1)[...])])
        #expect(scene.central.aclBuffersInUse == 0)
    }

    @Test("ACL on a handle that just ended is dropped quietly, as many as the host's credits allow; one more is a violation")
    func lateACLAfterDisconnection() {
        let scene = AdvertisingScene.connected(configure: { $0.leBufferSize = .init(packetLength: 27, packetCount: 4) })
        // One packet held in a buffer when the link ends: the host can have at most three more credits,
        // so at most three more packets on the handle before it reads Disconnection Complete.
        scene.central.loseAllLinks()
        #expect(scene.central.receive(hostPacket: aclPacket(l2capFrame(payload: 1))).isEmpty)
        #expect(scene.central.aclBuffersInUse == 1)
        scene.link.clock.advance(by: .seconds(5))
        #expect(hexLines(scene.central.takeOutput()) == ["04 05 04 00 40 00 08"])
        let late = (2...4).map { l2capFrame(payload: $0) }
        for frame in late { #expect(scene.central.receive(hostPacket: aclPacket(frame)).isEmpty) }
        #expect(scene.central.violations.isEmpty, "a host cannot know the handle ended before it reads the event")
        #expect(scene.central.lateACLPackets == late.map { .init(handle: 0x40, payload: $0) })
        #expect(scene.central.aclBuffersInUse == 0, "a dropped late packet holds no buffer")

        let beyond = l2capFrame(payload: 5)
        #expect(scene.central.receive(hostPacket: aclPacket(beyond)).isEmpty)
        #expect(scene.central.violations == [.aclUnknownHandle(handle: 0x40, payload: beyond)],
                "a fifth packet needed a credit the host only got back from the event itself")
        #expect(scene.central.receive(hostPacket: aclPacket(handle: 0x41, l2capFrame(payload: 1))).isEmpty)
        #expect(scene.central.violations.last == .aclUnknownHandle(handle: 0x41, payload: l2capFrame(payload: 1)),
                "a handle that never existed has no allowance")
        #expect(scene.peripheral.takeOutput() == [HCIPacket(type: .event, payload: hexBytes("05 04 00 40 00 08"))],
                "nothing late reaches the peer")
    }

    @Test("the allowance counts the buffers in use when the link ended, on the side that ended it too")
    func lateACLAllowanceFollowsBuffersInUse() {
        let scene = AdvertisingScene.connected(configure: { $0.leBufferSize = .init(packetLength: 27, packetCount: 2) })
        scene.peripheral.loseAllLinks()
        // Both of the peripheral's buffers are held: its host has no credit left for a late packet.
        #expect(scene.peripheral.receive(hostPacket: aclPacket(l2capFrame(payload: 1))).isEmpty)
        #expect(scene.peripheral.receive(hostPacket: aclPacket(l2capFrame(payload: 2))).isEmpty)
        scene.link.clock.advance(by: .seconds(5))
        #expect(hexLines(scene.peripheral.takeOutput()) == ["04 05 04 00 40 00 08"])
        #expect(hexLines(scene.central.takeOutput()) == ["04 05 04 00 40 00 08"])
        #expect(scene.peripheral.receive(hostPacket: aclPacket(l2capFrame(payload: 3))).isEmpty)
        #expect(scene.peripheral.violations == [.aclUnknownHandle(handle: 0x40, payload: l2capFrame(payload: 3))])
        #expect(scene.peripheral.lateACLPackets.isEmpty)
        // The central had nothing in flight: two late packets are within its credits.
        for payload in 1...2 { #expect(scene.central.receive(hostPacket: aclPacket(l2capFrame(payload: payload))).isEmpty) }
        #expect(scene.central.violations.isEmpty && scene.central.lateACLPackets.count == 2)
    }

    @Test("the link drops after packet k: k packets arrive, the rest never do, both sides time out with 0x08")
    func dropLinkAfterPacketK() {
        let scene = AdvertisingScene.connected()
        scene.central.faults.dropLinkAfterACLPackets = 2
        let frames = (1...3).map { l2capFrame(payload: $0) }
        #expect(hexLines(scene.central.receive(hostPacket: aclPacket(frames[0]))) == [nocpEvent(1)])
        #expect(hexLines(scene.central.receive(hostPacket: aclPacket(frames[1]))) == [nocpEvent(1)])
        #expect(scene.central.receive(hostPacket: aclPacket(frames[2])).isEmpty)
        #expect(hexLines(scene.peripheral.takeOutput()) == [deliveredACL(start: true, frames[0][...]), deliveredACL(start: true, frames[1][...])])
        #expect(scene.central.faults.dropLinkAfterACLPackets == nil, "the fault fires once")
        // The peripheral's data is lost too.
        #expect(scene.peripheral.receive(hostPacket: aclPacket(frames[0])).isEmpty)
        scene.link.clock.advance(by: .seconds(5))
        #expect(hexLines(scene.central.takeOutput()) == ["04 05 04 00 40 00 08"])
        #expect(hexLines(scene.peripheral.takeOutput()) == ["04 05 04 00 40 00 08"])
        #expect(scene.central.violations.isEmpty && scene.peripheral.violations.isEmpty)
    }

    @Test("ACL from the peer is delivered to an output handler as it is produced, not kept in the outbox")
    func outputHandler() {
        let scene = AdvertisingScene.connected()
        let received = SendableRecorder<HCIPacket>()
        scene.peripheral.setOutputHandler { received.append($0) }
        let frame = l2capFrame(payload: 4)
        scene.central.receive(hostPacket: aclPacket(frame))
        #expect(hexLines(received.values) == [deliveredACL(start: true, frame[...])])
        #expect(scene.peripheral.takeOutput().isEmpty)
        #expect(scene.peripheral.receive(hostPacket: HCICommand.reset.packet).isEmpty, "answers go to the handler too")
        #expect(received.values.last?.hex == "04 0e 04 01 03 0c 00")
    }
}
