import BluewireCore
import ExampleSupport
import Foundation
import Testing
import PeerTestSupport

/// The OTA example (Examples/OTA) run as two processes on bumble's virtual link: the central sends
/// an image through a `RemotePeripheral` (every step a queued command, auto-connect and an
/// application authorizer attached) and the peripheral checks its length and CRC-32.
@Suite("Example: OTA update")
struct ExampleOTAInteropTests {
    static let size = 16_384

    /// Runs the pair; returns both processes' output once the central has exited.
    func transfer(
        peripheralArguments: [String] = [], centralArguments: [String] = []
    ) async throws -> (status: Int32, central: [String], centralErrors: String, peripheral: [String]) {
        let address = newStaticAddress()
        return try await withBumblePeer([.tcp, .tcp], arguments: []) { peer in
            let target = try PeripheralProcess(
                "ota-peripheral", ["--transport", peer.transports[0], "--own-address", address.hexString] + peripheralArguments)
            defer { target.stop() }
            try await target.first("the peripheral to be ready") { $0.hasPrefix("Bluewire OTA ready as \(address)") }
            let central = try PeripheralProcess(
                "ota-central", ["--transport", peer.transports[1], "--peer", address.hexString, "--size", "\(Self.size)"] + centralArguments)
            defer { central.stop() }
            // A watchdog for a hang, not a timing assertion.
            let status = await central.exitStatus(within: .seconds(120))
            let errors = central.standardError
            target.send(signal: SIGINT)
            #expect(await target.exitStatus() == 0, "stderr: \(target.standardError)")
            return (status, await central.lines.events, errors, await target.lines.events)
        }
    }

    static var crc: String { hex(OTAProfile.crc32(OTAProfile.testImage(length: size)), width: 8) }

    @Test func anImageArrivesWholeAndThePeripheralVerifiesItsCRC() async throws {
        let run = try await transfer()
        #expect(run.status == 0, "stderr: \(run.centralErrors)")
        #expect(run.central.first?.hasPrefix("connected to ") == true, "\(run.central)")
        #expect(run.central.contains("authorized (link 1)"))
        #expect(run.central.contains("status: idle 0/0 bytes, CRC-32 00000000"), "a fresh peripheral: \(run.central)")
        #expect(run.central.contains("status: verified \(Self.size)/\(Self.size) bytes, CRC-32 \(Self.crc)"))
        #expect(run.central.contains("last notified: verified \(Self.size)/\(Self.size) bytes, CRC-32 \(Self.crc)"),
                "the subscription saw the final status")
        #expect(run.central.last?.hasPrefix("verified \(Self.size) bytes, CRC-32 \(Self.crc), in ") == true, "\(run.central)")
        #expect(run.central.last?.hasSuffix(" over 1 link") == true, "\(run.central)")
        #expect(run.peripheral.contains("image verified \(Self.size)/\(Self.size) bytes, CRC-32 \(Self.crc)"), "\(run.peripheral)")
        #expect(run.peripheral.filter { $0.hasPrefix("connected: ") }.count == 1)
    }

    /// The peripheral really drops the link (LL terminate on bumble's link) after the 10th chunk; the
    /// central's auto-connect reconnects, the authorizer writes the token on the new link, the
    /// subscription is enabled again, the interrupted chunk is written again and the rest follow.
    @Test func aLinkDroppedMidTransferIsResumedOnANewLinkAndTheImageArrivesWhole() async throws {
        let run = try await transfer(peripheralArguments: ["--drop-after", "10"])
        #expect(run.status == 0, "stderr: \(run.centralErrors)")
        let dropped = try #require(run.peripheral.firstIndex(of: "dropping the link after chunk 10"), "\(run.peripheral)")
        let verified = try #require(
            run.peripheral.firstIndex(of: "image verified \(Self.size)/\(Self.size) bytes, CRC-32 \(Self.crc)"), "\(run.peripheral)")
        #expect(dropped < verified)
        #expect(run.peripheral.filter { $0.hasPrefix("connected: ") }.count == 2, "\(run.peripheral)")
        #expect(!run.peripheral[..<dropped].contains("received \(Self.size)/\(Self.size) bytes"), "dropped mid-transfer")

        let reconnected = try #require(run.central.firstIndex(of: "reconnected (link 2)"), "\(run.central)")
        #expect(run.central[reconnected...].contains("authorized (link 2)"), "the new link is authorized again")
        #expect(run.central[reconnected...].contains("resubscribed (1)"))
        #expect(run.central.contains("status: verified \(Self.size)/\(Self.size) bytes, CRC-32 \(Self.crc)"))
        #expect(run.central.last?.hasPrefix("verified \(Self.size) bytes, CRC-32 \(Self.crc), in ") == true, "\(run.central)")
        #expect(run.central.last?.hasSuffix(" over 2 links") == true, "\(run.central)")
    }

    @Test func aWrongTokenIsRefusedAndNothingIsWritten() async throws {
        let run = try await transfer(centralArguments: ["--token", "wrong"])
        #expect(run.status == 1)
        #expect(run.centralErrors.contains("Value Not Allowed (0x13)"), "\(run.centralErrors)")
        #expect(!run.peripheral.contains { $0.hasPrefix("receiving") }, "\(run.peripheral)")
    }
}
