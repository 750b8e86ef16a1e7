import Bluewire
import BluewireCore
import BluewireHCI
import BluewireSnoop
import BluewireTesting
import BluewireTransport
import HostTestSupport
import Foundation
import Testing

/// The Host's bring-up replayed against a capture Bluewire recorded with a bumble controller
/// (`Captures/bumble_host_bringup.btsnoop`, `BringUpCapture`): no bumble runs, the capture is the
/// controller. Recorded again live: `ReplayRecordingBumbleTests`.
@Suite("Host bring-up replayed from a bumble capture")
struct ReplayHostBringUpTests {
    @Test("bring-up replays byte-exactly and learns what the bumble controller answered")
    func bringUpReplaysStrictly() async throws {
        let records = try captureRecords(ReplayFixtures.captures.appendingPathComponent(BringUpCapture.captureName))
        let (result, transport) = await BringUpCapture.bringUp(records, address: BringUpCapture.recordedAddress)
        let info = try result.get()
        try await transport.verify()
        #expect(await transport.unsentPackets.isEmpty)
        #expect(await transport.sentCount == records.filter { $0.direction == .hostToController }.count)
        // Values of the capture's Command Completes (bluewire decode / tshark show the same).
        #expect(info.randomAddress == BringUpCapture.recordedAddress)
        // Read BD_ADDR's Command Complete: 0e 0a 01 09 10 <status> <6 address octets, little-endian>.
        let readBDAddr = try #require(records.compactMap(\.packet).first {
            $0.type == .event && $0.payload.count == 12 && $0.payload.prefix(5).elementsEqual([0x0E, 0x0A, 0x01, 0x09, 0x10])
        })
        let octets = Array(readBDAddr.payload.suffix(6))
        #expect(info.publicAddress == BluetoothAddress(octets[5], octets[4], octets[3], octets[2], octets[1], octets[0]))
        #expect(info.leACLDataPacketLength == 27)
        #expect(info.totalNumLEACLDataPackets == 64)
        #expect(info.version.hciVersion == 9)
        #expect(info.version.companyIdentifier == 0xFFFF)
    }

    @Test("two replays of the bring-up learn the same controller and exchange the same packets")
    func bringUpIsDeterministic() async throws {
        let records = try captureRecords(ReplayFixtures.captures.appendingPathComponent(BringUpCapture.captureName))
        let (first, firstTransport) = await BringUpCapture.bringUp(records, address: BringUpCapture.recordedAddress)
        let (second, secondTransport) = await BringUpCapture.bringUp(records, address: BringUpCapture.recordedAddress)
        #expect(try first.get() == second.get())
        #expect(await firstTransport.sentCount == secondTransport.sentCount)
        #expect(await firstTransport.deliveredCount == secondTransport.deliveredCount)
    }

    @Test("a host using another address than the recording fails at LE Set Random Address with a hex diff")
    func differentAddressFailsWithDiff() async throws {
        let records = try captureRecords(ReplayFixtures.captures.appendingPathComponent(BringUpCapture.captureName))
        let other = BluetoothAddress.randomStatic(0x0102_0304_0506)
        let (result, transport) = await BringUpCapture.bringUp(records, address: other)
        guard case .failure = result else {
            Issue.record("bring-up with another address must fail")
            return
        }
        let failure = try #require(await transport.failure)
        let setRandomAddress = try #require(records.first {
            $0.packet?.type == .command && $0.packet?.payload.prefix(2).elementsEqual([0x05, 0x20]) == true
        })
        #expect(failure.reason == .differentBytes)
        #expect(failure.recordIndex == setRandomAddress.index)
        #expect(failure.actual?.payload.suffix(6).elementsEqual(other.littleEndianBytes) == true)
        #expect(failure.diff.contains("^^"))
    }
}
