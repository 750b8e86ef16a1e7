import BluewireCore
import Foundation
import PeerTestSupport
import Testing

/// `bluewire serve --mtu`: the ATT_MTU a bumble central gets back from its Exchange MTU Request.
/// BlueZ and bumble answer 517; `serve` does too unless told otherwise, so a GATT script written
/// against them sees the same ATT_MTU here.
@Suite("bluewire serve --mtu against a bumble central")
struct ServeMTUInteropTests {
    static let database = """
        { "services": [ { "uuid": "0x180f", "characteristics": [
            { "uuid": "0x2a19", "properties": ["read"], "value": "64" } ] } ] }
        """

    /// Runs serve with `options`, has the bumble central connect and ask for `requested`; returns what
    /// bumble's exchange settled and serve's `mtu` line.
    static func exchange(serveOptions options: [String], requested: Int) async throws -> (bumble: Int?, line: String) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("serve-mtu-\(UUID().uuidString.prefix(8)).json")
        try database.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let address = newStaticAddress()
        return try await withBumblePeer([.tcp], arguments: ["--central", address.hexString, "--manual"]) { peer in
            let peerLog = EventLog(peer.events.map { PeerJSON(line: $0) })
            let serve = try PeripheralProcess("bluewire", [
                "serve", "--db", file.path, "--transport", peer.transports[0], "--own-address", address.hexString,
            ] + options)
            defer { serve.stop() }
            try await serve.first("the advertising line") { $0.hasPrefix("advertising \"") }
            peer.command(0, "connect", ["mtu": requested, "discover": false])
            let answer = try await peerLog.first("bumble's MTU exchange") { $0.isCentral(0, "mtu") }
            let line = try await serve.first("serve's mtu line") { $0.hasPrefix("mtu 0x") }
            serve.send(signal: SIGINT)
            #expect(await serve.exitStatus() == 0, "stderr: \(serve.standardError)")
            return (answer["mtu"]?.int, line)
        }
    }

    @Test("by default serve answers an exchange with 517, as BlueZ and bumble do")
    func defaultIs517() async throws {
        let (bumble, line) = try await Self.exchange(serveOptions: [], requested: 517)
        #expect(bumble == 517, "bumble's ATT_MTU after the exchange")
        #expect(line.hasSuffix(" 517"), "\(line)")
    }

    @Test("--mtu N is what serve answers; the exchange settles on the smaller of the two")
    func optionIsOffered() async throws {
        let (bumble, line) = try await Self.exchange(serveOptions: ["--mtu", "100"], requested: 517)
        #expect(bumble == 100)
        #expect(line.hasSuffix(" 100"), "\(line)")
    }

    @Test("--mtu outside 23-517 is refused before any controller is touched", arguments: ["22", "518", "x"])
    func outOfRangeRefused(_ value: String) async throws {
        let result = try await ProcessRunner.run(try ProcessRunner.bluewire, [
            "serve", "--db", "/nonexistent.json", "--mtu", value, "--transport", "tcp:127.0.0.1:1",
        ])
        #expect(result.status != 0)
        #expect(result.standardError.contains("--mtu") || result.standardError.contains("MTU"), "\(result.standardError)")
        #expect(!result.standardError.contains("cannot open"), "validated before the database and the controller: \(result.standardError)")
    }
}
