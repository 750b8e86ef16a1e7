import BluewireCore
import Foundation
import Testing
import PeerTestSupport

/// The `bluewire gatt` commands as a user runs them: the built binary, as a process, against a bumble
/// GATT peripheral.
@Suite("bluewire gatt (process) against a bumble peripheral")
struct GATTClientCLIInteropTests {
    /// A bumble link serving `GATTInteropDatabase`, its attribute table and events, and the
    /// arguments that reach it (`ADDR/random --transport T`).
    struct Peripheral {
        var peer: BumblePeer
        var events: BumbleEventLog
        var database: [BumbleAttribute]
        var address: String
        var transport: String

        static func start() async throws -> Peripheral {
            let file = try GATTInteropDatabase.file()
            defer { try? FileManager.default.removeItem(at: file) }
            let peer = try await BumblePeer.start([.tcp], arguments: ["--peripheral", "--interval", "50", "--gatt", file.path])
            let events = BumbleEventLog(peer.events)
            let table = try #require(await events.first { $0["database"] != nil }?["database"])
            let database = try JSONDecoder().decode([BumbleAttribute].self, from: JSONSerialization.data(withJSONObject: table))
            return Peripheral(
                peer: peer, events: events, database: database,
                address: try #require(peer.ready.device?.address) + "/random", transport: peer.transports[0])
        }

        func run(_ arguments: [String]) async throws -> ProcessResult {
            try await ProcessRunner.run(try ProcessRunner.bluewire, ["gatt"] + arguments + ["--transport", transport], timeout: .seconds(15))
        }
    }

    /// What `scan` prints is what the other commands take: the address in its text line and in its
    /// JSON is pasted into `gatt dump` as it stands.
    @Test("the address scan prints (text and JSON) pastes into gatt dump; without its type, the timeout says how to give it")
    func scannedAddressPastes() async throws {
        let peripheral = try await Peripheral.start()
        defer { peripheral.peer.stop() }
        let bluewire = try ProcessRunner.bluewire
        let bare = String(peripheral.address.prefix(17))
        let scan = ["scan", "--transport", peripheral.transport, "--duration", "1.5", "--address", bare]
        let text = try await ProcessRunner.run(bluewire, scan, timeout: .seconds(15))
        #expect(text.status == 0, "stderr: \(text.standardError)")
        let line = try #require(text.outputLines.first { $0.hasPrefix(bare) }, "scan printed: \(text.standardOutput)")
        let printed = String(line.prefix { $0 != " " })
        let json = try await ProcessRunner.run(bluewire, scan + ["--json"], timeout: .seconds(15))
        let object = try #require(json.outputLines.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] },
                                  "scan --json printed: \(json.standardOutput)")
        #expect(object["address"] as? String == printed, "text and JSON give the same address")
        let dump = try await peripheral.run(["dump", printed])
        #expect(dump.status == 0, "gatt dump \(printed): \(dump.standardError)")
        #expect(dump.outputLines.first?.hasPrefix("\(peripheral.address): ATT MTU") == true, "\(dump.standardOutput)")

        // The bare address is a public one: no advertiser has it, and the error says what to type.
        let missing = try await peripheral.run(["dump", bare, "--connect-timeout", "1"])
        #expect(missing.status == 1)
        #expect(missing.standardError.contains("give \(bare)/random, as `bluewire scan` prints it"), "stderr: \(missing.standardError)")
    }

    @Test("gatt dump --json prints the peripheral's database with every readable value, and --capture records a clean session")
    func dumpJSON() async throws {
        let peripheral = try await Peripheral.start()
        defer { peripheral.peer.stop() }
        let capture = interopCapturePath("bluewire_gatt_cli_dump.btsnoop")
        defer { removeTemporaryCapture(capture) }
        let result = try await peripheral.run(["dump", peripheral.address, "--json", "--capture", capture, "--own-address", "C4:5A:17:00:B2:06"])
        #expect(result.status == 0, "stderr: \(result.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(object["peer"] as? String == peripheral.address)
        #expect(!result.standardOutput.contains("\\/"), "no escaped slashes")
        expectSnakeCaseKeys(object)
        #expect((object["mtu"] as? Int ?? 0) > 23)
        let attributes = try #require(object["attributes"] as? [[String: Any]])
        #expect(attributes.compactMap { ($0["handle"] as? String).flatMap { UInt16($0.dropFirst(2), radix: 16) } } == peripheral.database.map(\.handle))
        let types = attributes.map { ($0["type"] as? String).flatMap(BluetoothUUID.init(parsing:)).map { hexString($0.attBytes) } }
        #expect(types == peripheral.database.map { Optional($0.type) })
        for (mine, theirs) in zip(attributes, peripheral.database) {
            guard let value = theirs.value, let read = mine["value"] as? String else { continue }
            #expect(read == value, "value of handle \(theirs.handle)")
        }
        let longHandle = try #require(peripheral.database.first { $0.type == hexString(GATTInteropDatabase.long.attBytes) }?.handle)
        #expect(attributes.first { $0["handle"] as? String == "0x" + hex(longHandle, width: 4) }?["value"] as? String
            == hexString(GATTInteropDatabase.longValue))
        let services = try #require(object["services"] as? [[String: Any]])
        #expect(services.compactMap { $0["name"] as? String }.prefix(2) == ["Generic Access", "Generic Attribute"])
        try await expectCaptureAgreesWithTshark(capture)
    }

    @Test("gatt read --long, write (with and without response) and subscribe --count work against the same peripheral")
    func readWriteSubscribe() async throws {
        let peripheral = try await Peripheral.start()
        defer { peripheral.peer.stop() }
        let handle = { (uuid: BluetoothUUID) throws -> String in
            let type = hexString(uuid.attBytes)
            return "0x" + hex(try #require(peripheral.database.first { $0.type == type }?.handle), width: 4)
        }
        let read = try await peripheral.run(["read", peripheral.address, try handle(GATTInteropDatabase.long), "--long"])
        #expect(read.status == 0, "stderr: \(read.standardError)")
        #expect(read.standardOutput == hexString(GATTInteropDatabase.longValue) + "\n")
        // The default reads the whole value too (--long is kept for scripts); --single sends one
        // Read Request, whole here as ATT_MTU is 517 with bumble.
        for flags in [[], ["--single"]] {
            let plain = try await peripheral.run(["read", peripheral.address, try handle(GATTInteropDatabase.long)] + flags)
            #expect(plain.status == 0 && plain.standardOutput == hexString(GATTInteropDatabase.longValue) + "\n", "\(flags): \(plain.standardError)")
            #expect(plain.standardError.isEmpty, "\(flags): \(plain.standardError)")
        }

        let control = try handle(GATTInteropDatabase.control)
        let write = try await peripheral.run(["write", peripheral.address, control, "c0:ff:ee"])
        #expect(write.status == 0 && write.standardOutput.contains("write request"), "\(write.standardOutput) \(write.standardError)")
        let command = try await peripheral.run(["write", peripheral.address, control, "0x0102", "--without-response"])
        #expect(command.status == 0 && command.standardOutput.contains("write command"), "\(command.standardError)")
        let written = await peripheral.events.first { ($0["value"] as? String) == "0102" && $0["write"] != nil }
        #expect(written != nil && peripheral.events.events.contains { ($0["value"] as? String) == "c0ffee" })

        let subscribe = try await peripheral.run(["subscribe", peripheral.address, try handle(GATTInteropDatabase.counter), "--count", "3", "--json"])
        #expect(subscribe.status == 0, "stderr: \(subscribe.standardError)")
        let values = subscribe.outputLines.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["value"] as? String
        }
        #expect(values == ["00000000", "01000000", "02000000"])

        let missing = try await peripheral.run(["read", peripheral.address, "0x0fff"])
        #expect(missing.status != 0)
        #expect(missing.standardError.split(separator: "\n").count == 1, "one line: \(missing.standardError)")
        #expect(missing.standardError.contains("Invalid Handle"))
    }
}
