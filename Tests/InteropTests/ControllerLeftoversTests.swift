import BluewireCore
import Foundation
import Testing
import PeerTestSupport

/// A process killed with SIGKILL cannot clean up: scanning stays enabled, an LE Create Connection
/// stays pending on the controller (bumble's Reset clears neither). The next command clears what HCI
/// lets it clear at start (scan disable, advertising disable, LE Create Connection Cancel) and works.
/// Without that, bumble refuses LE Set Scan Parameters while scanning and LE Create Connection while
/// one is pending (Command Disallowed, Core Vol 4 Part E §7.8.10, §7.8.12).
extension ScanInteropTests {
    @Test("a scan killed with SIGKILL leaves scanning on: the next scan clears it and finds the advertiser")
    func scanAfterAKilledScan() async throws {
        let fixture = ScanAdvertiserFixture()
        try await withBumblePeer([.tcp], arguments: fixture.arguments) { peer in
            let address = try peer.peripheralAddress
            let killed = try PeripheralProcess("bluewire", ["scan", "--json", "--transport", peer.transports[0]])
            defer { killed.stop() }
            // A report means the controller is scanning.
            try await killed.first("the first report") { $0.contains(address.hexString) }
            killed.send(signal: SIGKILL)
            #expect(await killed.exitStatus() == SIGKILL)
            let next = try await ProcessRunner.run(try ProcessRunner.bluewire, [
                "scan", "--duration", "1", "--json", "--transport", peer.transports[0],
            ])
            #expect(next.status == 0, "stderr: \(next.standardError)")
            #expect(next.standardOutput.contains(address.hexString), "\(next.standardOutput)")
        }
    }
}

extension GATTClientCLIInteropTests {
    @Test("a gatt command killed with SIGKILL while connecting leaves LE Create Connection pending: the next command cancels it and connects")
    func connectAfterAKilledConnectionAttempt() async throws {
        let peripheral = try await Peripheral.start()
        defer { peripheral.peer.stop() }
        // Nobody advertises at this address: the attempt stays pending.
        let killed = try PeripheralProcess("bluewire", [
            "gatt", "read", "C0:DE:00:00:00:02/random", "3", "--connect-timeout", "60", "--verbose",
            "--transport", peripheral.transport,
        ])
        defer { killed.stop() }
        // The trace goes to stderr, which the test reads from a file: checked until the controller
        // has answered LE Create Connection with Command Status (the attempt is pending).
        try await waitUntil(timeout: .seconds(20)) {
            let log = killed.standardError
            guard let sent = log.range(of: "command LE Create Connection (0x200d)") else { return false }
            return log[sent.upperBound...].contains("< Command Status")
        }
        killed.send(signal: SIGKILL)
        #expect(await killed.exitStatus() == SIGKILL)
        let read = try await peripheral.run(["read", peripheral.address, "0x0003"])
        #expect(read.status == 0, "stderr: \(read.standardError)")
    }
}
