import Bluewire
import BluewireCore
import BluewireTransport
import Foundation
import PeerTestSupport
import Testing

/// `BluetoothHost.start()` clears what a previous program left on the controller, as the command
/// line does: against bumble's controller, whose Reset clears nothing (Docs/Testing.md), a program
/// that ended without `release()` (a signal) leaves its advertising running.
@Suite("BluetoothHost: a previous program's leftovers at start (bumble)", .serialized)
struct HostLeftoversAtStartBumbleTests {
    /// The first program on controller 0 advertises and ends with `close()` only; the next one starts
    /// on the same controller with `clears`; a scanner on controller 1 then says whether the first
    /// program's advertisement is still on the air.
    static func advertisementSurvives(clears: Bool) async throws -> Bool {
        try await withBumblePeer([.tcp, .tcp]) { peer in
            let first = BluetoothAddress.randomStatic(UInt64.random(in: 0...0x3FFF_FFFF_FFFF))
            let previous = BluetoothHost(transport: try await TransportSpec(parsing: peer.transports[0]).open(),
                                         configuration: HostConfiguration(randomAddress: first))
            try await previous.start()
            try await previous.startAdvertising(try Advertisement(name: "Leftover"))
            await previous.close()   // no release(): what a killed process leaves behind

            let next = BluetoothHost(transport: try await TransportSpec(parsing: peer.transports[0]).open(),
                                     configuration: HostConfiguration(clearsControllerLeftoversAtStart: clears))
            try await next.start()
            let scanner = BluetoothHost(transport: try await TransportSpec(parsing: peer.transports[1]).open())
            try await scanner.start()
            var seen = false
            // Two seconds are many advertising intervals: a leftover advertisement is seen if it is on.
            // By name: bumble's controller advertises from its current random address, which the next
            // host's bring-up has just changed.
            for try await device in await scanner.scan(duration: .seconds(2)) where device.name == "Leftover" {
                seen = true
                break
            }
            await scanner.release()
            await next.release()
            return seen
        }
    }

    @Test("by default start() stops the advertising a previous program left running")
    func startClearsLeftoverAdvertising() async throws {
        #expect(try await Self.advertisementSurvives(clears: false), "the leftover is there to clear (bumble's Reset keeps it)")
        #expect(try await !Self.advertisementSurvives(clears: true), "start() cleared it")
    }
}
