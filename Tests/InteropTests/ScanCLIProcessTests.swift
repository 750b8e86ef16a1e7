import BluewireCore
import Foundation
import Testing
import PeerTestSupport

extension ScanInteropTests {
    /// `bluewire scan --json` as a user runs it: a separate process against bumble, exit status 0
    /// after --duration, one JSON object per discovered or changed device.
    @Test("bluewire scan --json finds bumble's advertiser and exits 0 after --duration")
    func scanCommandPrintsJSONLines() async throws {
        let fixture = ScanAdvertiserFixture()
        let binary = try ProcessRunner.bluewire
        try await withBumblePeer([.tcp], arguments: fixture.arguments) { peer in
            let address = try peer.peripheralAddress
            let capture = FileManager.default.temporaryDirectory.appendingPathComponent("scan-cli-\(UUID().uuidString.prefix(8)).btsnoop").path
            defer { try? FileManager.default.removeItem(atPath: capture) }
            let result = try await ProcessRunner.run(binary, [
                "scan", "--transport", peer.transports[0], "--duration", "2", "--json", "--name", "Bluewire", "--capture", capture,
            ])
            #expect(result.status == 0, "exit status \(result.status), stderr: \(result.standardError)")
            #expect(result.standardError.isEmpty, "stderr: \(result.standardError)")
            // Event order instead of a wall-clock duration: the capture shows the scan enabled, the
            // advertiser's reports, then the scan disabled as the last command, and nothing (no
            // signal, no error) but the duration could have disabled it.
            let decoded = try await ProcessRunner.run(binary, ["decode", capture])
            let lines = decoded.outputLines
            let enabled = try #require(lines.firstIndex { $0.contains("HCI Command: LE Set") && $0.contains("Scan Enable") && $0.contains("enable=yes") },
                                       "no scan enable in the capture")
            let report = try #require(lines.firstIndex { $0.contains("Advertising Report") && $0.contains("address=\(address.hexString)") },
                                      "no report from \(address) in the capture")
            let disabled = try #require(lines.lastIndex { $0.contains("HCI Command: LE Set") && $0.contains("Scan Enable") && $0.contains("enable=no") },
                                        "no scan disable in the capture")
            #expect(enabled < report && report < disabled)
            #expect(!lines[(disabled + 1)...].contains { $0.contains("HCI Command:") }, "the scan disable is the last command")

            let objects = try result.outputLines.map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
            }
            // The address as every command takes it: `/random` for a random one.
            let mine = objects.filter { ($0["address"] as? String) == "\(address)" }
            let device = try #require(mine.last, "no line for \(address) in:\n\(result.standardOutput)")
            #expect(objects.count == mine.count, "the --name filter let other devices through")
            #expect(device["address_type"] as? String == "random")
            #expect(device["name"] as? String == fixture.name)
            #expect(device["connectable"] as? Bool == true)
            #expect((device["rssi"] as? Int).map { $0 < 0 } == true)
            let services = try #require(device["services"] as? [[String: Any]])
            #expect(services.compactMap { $0["uuid"] as? String } == ["0x180D", "0x180F"])
            #expect(services.compactMap { $0["name"] as? String } == ["Heart Rate", "Battery"])
            let manufacturer = try #require(device["manufacturer_data"] as? [[String: Any]])
            #expect(manufacturer.count == 1)
            #expect(manufacturer.first?["company"] as? String == "0xFFFF")
            #expect(manufacturer.first?["data"] as? String == "010203")
            #expect((device["advertising_data"] as? String)?.count == 2 * fixture.advertisingDataLength)
            // The fixture advertises no TX Power Level: null, not bumble's report TX_Power of 0.
            #expect(device.keys.contains("tx_power") && device["tx_power"] is NSNull, "tx_power: \(device["tx_power"] ?? "absent")")
            #expect(!result.standardOutput.contains("\\/"), "no escaped slashes")
            for object in objects { expectSnakeCaseKeys(object) }
        }
    }

    @Test("bluewire scan prints text lines when stdout is not a terminal")
    func scanCommandPrintsTextLinesToAPipe() async throws {
        let fixture = ScanAdvertiserFixture()
        let binary = try ProcessRunner.bluewire
        try await withBumblePeer([.tcp], arguments: fixture.arguments) { peer in
            let address = try peer.peripheralAddress
            let result = try await ProcessRunner.run(binary, [
                "scan", "--transport", peer.transports[0], "--duration", "1.5", "--service", "180D", "--passive",
            ])
            #expect(result.status == 0, "stderr: \(result.standardError)")
            let line = try #require(result.outputLines.first { $0.hasPrefix(address.hexString) }, "output:\n\(result.standardOutput)")
            #expect(line.hasPrefix("\(address) "), "the address as commands take it: \(line)")
            #expect(line.contains("\"\(fixture.name)\""))
            #expect(line.contains("0x180D (Heart Rate)"))
            #expect(line.contains("manufacturer=0xFFFF:010203"))
            #expect(!line.contains("\u{1B}"), "no terminal control sequences in a pipe")
        }
    }

    @Test("bluewire scan fails with one line on stderr and a non-zero status when nothing listens")
    func scanCommandReportsAnUnreachableControllerOnOneLine() async throws {
        // A port on loopback that was free a moment ago: connecting is refused.
        let server = try ScanFreePort()
        let result = try await ProcessRunner.run(try ProcessRunner.bluewire, ["scan", "--transport", "tcp:127.0.0.1:\(server.port)", "--duration", "1"])
        #expect(result.status != 0)
        #expect(result.standardOutput.isEmpty)
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.count == 1, "stderr: \(result.standardError)")
        #expect(lines.first?.hasPrefix("bluewire: ") == true)
    }

    @Test("bluewire scan rejects a malformed --service and --address before touching the transport")
    func scanCommandRejectsMalformedFilters() async throws {
        let binary = try ProcessRunner.bluewire
        for arguments in [["--service", "18"], ["--address", "C0:11:22"]] {
            let result = try await ProcessRunner.run(binary, ["scan", "--transport", "tcp:127.0.0.1:9"] + arguments)
            #expect(result.status != 0, "\(arguments) accepted")
            #expect(result.standardError.contains(arguments[1]), "stderr: \(result.standardError)")
        }
    }
}

/// A loopback TCP port that nothing listens on (bound then released).
struct ScanFreePort {
    let port: UInt16

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bind(descriptor, sa, length) == 0 && getsockname(descriptor, sa, &length) == 0
            }
        }
        guard ok else { throw ProcessRunner.Failure(description: "no free port: errno \(errno)") }
        port = UInt16(bigEndian: address.sin_port)
    }
}
