import Testing
import BluewireCore
@testable import BluewireHCI

@Suite struct LEMetaEventTests {
    func meta(_ h4: String) throws -> LEMetaEvent {
        guard case .leMeta(let m) = try HCIEvent(decoding: eventPayload(h4)) else {
            Issue.record("not LE Meta: \(h4)")
            return .unknown(subevent: LESubeventCode(rawValue: 0), parameters: [])
        }
        return m
    }

    @Test func legacyConnectionCompleteAsBumbleSendsIt() throws {
        guard case .connectionComplete(let c) = try meta("043e13 01 00 0100 00 01 060504030201 2800 0000 2a00 00") else {
            Issue.record("not Connection Complete")
            return
        }
        #expect(c.status == .success && c.connectionHandle == 1 && c.isCentral)
        #expect(c.peerAddress == BluetoothAddress(1, 2, 3, 4, 5, 6, type: .random))
        #expect(c.connectionInterval == 0x28 && c.supervisionTimeout == 0x2A)
        #expect(c.localResolvablePrivateAddress == nil)
    }

    @Test func enhancedConnectionCompleteFromAndroidCapture() throws {
        let m = try meta("043e1f0a00020000002b5c62cb0bd800000000000000000000000024000000f40100")
        guard case .enhancedConnectionComplete(let c) = m else {
            Issue.record("not Enhanced Connection Complete")
            return
        }
        #expect(m.subeventCode == .enhancedConnectionCompleteV1)
        #expect(c.connectionHandle == 2 && c.role == 0)
        #expect(c.peerAddress.description == "D8:0B:CB:62:5C:2B")
        #expect(c.connectionInterval == 0x24 && c.supervisionTimeout == 0x1F4)
        #expect(c.advertisingHandle == nil)
    }

    @Test func enhancedConnectionCompleteV2AddsHandles() throws {
        let m = try meta("043e22 29 00 0200 01 01 060504030201 000000000000 000000000000 1800 0000 f401 00 03 ffff")
        guard case .enhancedConnectionComplete(let c) = m else {
            Issue.record("not v2")
            return
        }
        #expect(c.advertisingHandle == 3 && c.syncHandle == 0xFFFF && c.role == 1)
        #expect(m.subeventCode == .enhancedConnectionCompleteV2)
    }

    @Test func connectionUpdateRemoteFeaturesDataLengthCSA() throws {
        guard case .connectionUpdateComplete(let u) = try meta("043e0a0300020006000000f401") else { Issue.record("update"); return }
        #expect(u.connectionHandle == 2 && u.connectionInterval == 6 && u.supervisionTimeout == 0x1F4)
        guard case .readRemoteFeaturesComplete(let f) = try meta("043e0c040002003d00000000000000") else { Issue.record("features"); return }
        #expect(f.leFeatures.contains(.leDataPacketLengthExtension) && !f.leFeatures.contains(.le2MPHY))
        guard case .dataLengthChange(let d) = try meta("043e0b0702001b004801c800b006") else { Issue.record("dle"); return }
        #expect(d.maxTxOctets == 27 && d.maxTxTime == 0x148 && d.maxRxOctets == 200 && d.maxRxTime == 0x6B0)
        guard case .channelSelectionAlgorithm(let c) = try meta("043e0414020000") else { Issue.record("csa"); return }
        #expect(c.connectionHandle == 2 && c.channelSelectionAlgorithm == 0)
    }

    @Test func phyUpdateAdvertisingSetTerminatedAndLongTermKeyRequest() throws {
        #expect(try meta("043e06 0c 00 0100 02 02") == .phyUpdateComplete(try { var r = ByteReader(bytes("00 0100 02 02")); return try LEPHYUpdateComplete(decoding: &r) }()))
        guard case .advertisingSetTerminated(let t) = try meta("043e06 12 00 01 4000 05") else { Issue.record("terminated"); return }
        #expect(t.advertisingHandle == 1 && t.connectionHandle == 0x40 && t.numCompletedExtendedAdvertisingEvents == 5)
        guard case .longTermKeyRequest(let k) = try meta("043e0d 05 0100 0807060504030201 3412") else { Issue.record("ltk"); return }
        #expect(k.randomNumber == 0x0102_0304_0506_0708 && k.encryptedDiversifier == 0x1234)
    }

    @Test func unknownSubeventStaysRaw() throws {
        #expect(try meta("043e03 11 aabb") == .unknown(subevent: LESubeventCode(rawValue: 0x11), parameters: [0xAA, 0xBB][...]))
        #expect(LESubeventCode(rawValue: 0x11).name == "LE Scan Timeout")
    }

    @Test func truncatedConnectionCompleteReportsPacketOffset() {
        #expect(throws: DecodeError(.truncated(needed: 6, available: 2), layer: "hci", field: "Peer_Address", offset: 8)) {
            _ = try HCIEvent(decoding: eventPayload("043e08 01 00 0100 00 01 0605"))
        }
    }
}
