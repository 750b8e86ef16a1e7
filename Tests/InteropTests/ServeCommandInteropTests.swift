import BluewireCore
import BluewireGATT
import BluewireSnoop
import BluewireTransport
import Foundation
import Testing
import PeerTestSupport

/// `bluewire serve` run as a process, against bumble centrals on a fresh link per test.
@Suite("bluewire serve against bumble")
struct ServeCommandInteropTests {
    /// A database with a long value, a writable value that notifies, and an indicating one, as the
    /// attribute table `serve --db` takes (explicit handles, kept exactly: this one starts at 0x0010).
    static func attributeTable() throws -> (json: String, database: GATTDatabase, long: UInt16, notifying: UInt16, indicating: UInt16) {
        var builder = GATTDatabaseBuilder(firstHandle: 0x0010)
        try builder.addService(.genericAccess)
        try builder.addCharacteristic(.deviceName, properties: [.read], permissions: [.read], value: .cached(Array("Served".utf8)))
        try builder.addService(BluetoothUUID(0x181A))
        let long = try builder.addCharacteristic(
            BluetoothUUID(0x2A6E), properties: [.read], permissions: [.read],
            value: .cached((0..<100).map { UInt8($0) }))
        let notifying = try builder.addCharacteristic(
            BluetoothUUID(0xFF10), properties: [.read, .write, .notify], permissions: [.read, .write], value: .cached([0x01]))
        let indicating = try builder.addCharacteristic(
            BluetoothUUID(0xFF11), properties: [.read, .write, .indicate], permissions: [.read, .write], value: .cached([0x02]))
        let database = builder.build()
        return (database.exportJSON(), database, long.valueHandle, notifying.valueHandle, indicating.valueHandle)
    }

    static func temporaryFile(_ text: String, _ name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString.prefix(8))-\(name)")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    @Test func bumbleReadsTheServedDatabaseWritesSubscribesAndSIGINTStopsServeCleanly() async throws {
        let table = try Self.attributeTable()
        let dbFile = try Self.temporaryFile(table.json, "db.json")
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString.prefix(8))-serve.btsnoop")
        defer {
            try? FileManager.default.removeItem(at: dbFile)
            try? FileManager.default.removeItem(at: capture)
        }
        let address = newStaticAddress()
        try await withBumblePeer([.tcp], arguments: ["--central", address.hexString]) { peer in
            let peerLog = EventLog(peer.events.map { PeerJSON(line: $0) })
            let serve = try PeripheralProcess("bluewire", [
                "serve", "--db", dbFile.path, "--transport", peer.transports[0],
                "--own-address", address.hexString, "--capture", capture.path,
            ])
            defer { serve.stop() }
            let banner = try await serve.first("the advertising line") { $0.hasPrefix("advertising \"") }
            // The table, and for EATT a GATT service after its last handle: its declaration and two
            // characteristics of two attributes each.
            #expect(banner == "advertising \"Served\" as \(address) (legacy), serving \(table.database.attributes.count + 5) attributes")
            try await peerLog.first("bumble's discovery") { $0.isCentral(0, "discovered") }

            // Every characteristic, with the values of the table, the long one by Read Blob; and
            // Server Supported Features (EATT bit) and Client Supported Features, which bumble reads too.
            let entries = await peerLog.events.filter { $0.isCentral(0, "characteristic") }
            #expect(entries.count == table.database.characteristics.count + 2)
            let last = try #require(table.database.attributes.last?.handle)
            let features = entries.filter { ($0["handle"]?.int ?? 0) > Int(last) }
            #expect(features.map { $0["value"]?.string } == ["01", "00"], "\(features)")
            #expect(features.compactMap { $0["characteristic"]?.string }.map { $0.uppercased() }.allSatisfy { $0.contains("2B3A") || $0.contains("2B29") },
                    "\(features)")
            for characteristic in table.database.characteristics {
                let entry = entries.first { $0["handle"]?.int == Int(characteristic.valueHandle) }
                #expect(entry?["value"]?.string == table.database[handle: characteristic.valueHandle]?.cachedValue.map(hexBytes),
                        "0x\(hex(characteristic.valueHandle, width: 4))")
            }
            let longReads = try await serve.lines.wait(for: 5, "the Read Blob lines") { $0.contains(" 0x\(hex(table.long, width: 4)) offset ") }
            #expect(longReads.map { $0.split(separator: " ")[4] } == ["0:", "22:", "44:", "66:", "88:"])
            // A value that is valid UTF-8 (the Device Name) shows as text too.
            let nameRead = try await serve.first("the Device Name read") { $0.hasPrefix("read ") && $0.contains("\"Served\"") }
            #expect(nameRead.hasSuffix(": " + hexString(Array("Served".utf8)) + " \"Served\" (6 bytes)"), "\(nameRead)")
            #expect(await serve.lines.events.contains { $0.hasPrefix("connected 0x") && $0.hasSuffix(" \(peer.ready.device!.address)/random") })
            try await serve.first("the subscriptions") { $0.contains("0x\(hex(table.indicating, width: 4)) indications") }
            try await serve.first("the notification subscription") { $0.contains("subscribed") && $0.contains("0x\(hex(table.notifying, width: 4)) notifications") }

            // A write to a notifying characteristic is printed and relayed to the subscriber.
            peer.command(0, "write", ["handle": Int(table.notifying), "value": "c0ffee"])
            let notification = try await peerLog.first("the relayed notification") { $0.isCentral(0, "notification", Int(table.notifying)) }
            #expect(notification["value"]?.string == "c0ffee")
            try await serve.first("the write line") { $0.contains("write ") && $0.hasSuffix("c0ffee (3 bytes)") }
            peer.command(0, "write", ["handle": Int(table.indicating), "value": "0102"])
            let indication = try await peerLog.first("the relayed indication") { $0.isCentral(0, "notification", Int(table.indicating)) }
            #expect(indication["value"]?.string == "0102" && indication["kind"]?.string == "indicate")
            try await serve.first("the confirmation") { $0.hasPrefix("indication confirmed") }

            serve.send(signal: SIGINT)
            #expect(await serve.exitStatus() == 0, "stderr: \(serve.standardError)")
            #expect(await serve.lines.events.last == "stopped (SIGINT)")
            try await peerLog.first("bumble to see the disconnection") { $0.isCentral(0, "disconnected") }
            #expect(serve.standardError.isEmpty, "stderr: \(serve.standardError)")
        }
        // The capture was closed cleanly: it reads to the end and holds the ATT traffic.
        let reader = try CaptureFileReader(path: capture.path)
        var acl = 0
        while let record = try reader.next() { if record.packet?.type == .acl { acl += 1 } }
        #expect(acl > 20, "ACL packets in the capture: \(acl)")
    }

    @Test func sigtermStopsServeAndJSONLinesDescribeEachEvent() async throws {
        let dbFile = try Self.temporaryFile("""
            { "services": [ { "uuid": "0x180d", "characteristics": [
                { "uuid": "0x2a37", "properties": ["read", "notify"], "value": "0048" } ] } ] }
            """, "services.json")
        defer { try? FileManager.default.removeItem(at: dbFile) }
        let address = newStaticAddress()
        try await withBumblePeer([.tcp], arguments: ["--central", address.hexString]) { peer in
            let serve = try PeripheralProcess("bluewire", [
                "serve", "--db", dbFile.path, "--name", "Heart", "--json",
                "--transport", peer.transports[0], "--own-address", address.hexString,
            ])
            defer { serve.stop() }
            let banner = PeerJSON(line: try await serve.first("the advertising line") { $0.contains("\"advertising\"") })
            #expect(banner["name"]?.string == "Heart" && banner["kind"]?.string == "legacy")
            let subscribed = PeerJSON(line: try await serve.first("the subscription") { $0.contains("\"subscribed\"") })
            #expect(subscribed["handle"]?.int == 3 && subscribed["notifications"] == .bool(true))
            let read = PeerJSON(line: try await serve.first("the read") { $0.contains("\"read\"") })
            #expect(read["value"]?.string == "0048")
            serve.send(signal: SIGTERM)
            #expect(await serve.exitStatus() == 0, "stderr: \(serve.standardError)")
            #expect(PeerJSON(line: await serve.lines.events.last ?? "")["signal"]?.string == "SIGTERM")
        }
    }

    @Test func anInvalidDatabaseIsOneLineOnStderrAndExitStatus1BeforeAnyController() async throws {
        let dbFile = try Self.temporaryFile("{ \"attributes\": [ { \"handle\": \"0x0001\", \"type\": \"0x2800\", \"value\": \"0g\" } ] }", "bad.json")
        defer { try? FileManager.default.removeItem(at: dbFile) }
        // Nothing listens on this transport: the database is checked before it is opened.
        let serve = try PeripheralProcess("bluewire", ["serve", "--db", dbFile.path, "--transport", "tcp:127.0.0.1:9"])
        defer { serve.stop() }
        #expect(await serve.exitStatus() == 1)
        let lines = serve.standardError.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("bluewire: \(dbFile.path): line 1, column"), "\(lines)")
        #expect(lines.first?.contains("invalid hex value") == true)
    }
}
