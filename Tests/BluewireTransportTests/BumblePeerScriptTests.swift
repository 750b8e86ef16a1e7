import BluewireCore
import Foundation
import Testing

@testable import BluewireTransport
import PeerTestSupport

/// The peer script's own options, proven through Bluewire's transport with raw HCI: what it
/// advertises, which report format the controllers emit, its GATT server, its central.
@Suite("bumble_link.py peer roles")
struct BumblePeerScriptTests {
    private static let uuid128 = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
    /// The 128-bit UUID as it appears in AD and ATT: little-endian.
    private static let uuid128Bytes: [UInt8] = [0x9E, 0xCA, 0xDC, 0x24, 0x0E, 0xE5, 0xA9, 0xE0, 0x93, 0xF3, 0xA3, 0xB5, 0x01, 0x00, 0x40, 0x6E]

    private func scan(legacyReports: Bool, advertising: String, name: String) async throws -> (subevent: UInt8, report: [UInt8], peer: BumblePeer.Ready) {
        var arguments = ["--peripheral", "--name", name, "--uuid16", "180D", "--manufacturer", "FFFF:0102", "--advertising", advertising]
        if advertising == "extended" { arguments += ["--uuid128", Self.uuid128] }
        if legacyReports { arguments.append("--legacy-reports") }
        return try await withBumblePeer([.tcp], arguments: arguments) { peer in
            let transport = try await TransportSpec(parsing: peer.transports[0]).open()
            defer { Task { await transport.close() } }
            var hci = RawHCI(transport)
            try await hci.bringUp(randomAddress: randomStaticAddress(0x01).bytes)
            try await hci.command(0x200B, [0x01, 0x10, 0x00, 0x10, 0x00, 0x01, 0x00])  // active scan, own random
            try await hci.command(0x200C, [0x01, 0x00])
            let report = try await hci.next("an advertising report") { packet in
                let p = Array(packet.payload)
                return packet.type == .event && p.count > 3 && p[0] == 0x3E && (p[2] == 0x02 || p[2] == 0x0D)
            }
            return (report.payload[report.payload.startIndex + 2], Array(report.payload), peer.ready)
        }
    }

    @Test func extendedAdvertisingArrivesAsExtendedReportsWithEveryADStructure() async throws {
        let (subevent, report, ready) = try await scan(legacyReports: false, advertising: "extended", name: "BW-Ext")
        #expect(subevent == 0x0D)
        #expect(report.containsSequence([0x07, 0x09] + Array("BW-Ext".utf8)), "complete local name")
        #expect(report.containsSequence([0x03, 0x03, 0x0D, 0x18]), "16-bit service UUID list")
        #expect(report.containsSequence([0x11, 0x07] + Self.uuid128Bytes), "128-bit service UUID list")
        #expect(report.containsSequence([0x05, 0xFF, 0xFF, 0xFF, 0x01, 0x02]), "manufacturer data")
        let address = try #require(ready.device?.address)
        let addressBytes = address.split(separator: ":").reversed().compactMap { UInt8($0, radix: 16) }
        #expect(report.containsSequence(addressBytes), "reported from the device's random address \(address)")
        #expect(addressBytes.last.map { $0 & 0xC0 == 0xC0 } == true, "a random static address")
    }

    @Test func legacyReportsOptionMakesTheControllerSendLEAdvertisingReports() async throws {
        let (subevent, report, _) = try await scan(legacyReports: true, advertising: "legacy", name: "BW-Leg")
        #expect(subevent == 0x02)
        #expect(report.containsSequence([0x07, 0x09] + Array("BW-Leg".utf8)))
        #expect(report.containsSequence([0x05, 0xFF, 0xFF, 0xFF, 0x01, 0x02]))
    }

    @Test func everyControllerGetsItsOwnRandomStaticAddress() async throws {
        try await withBumblePeer([.tcp, .tcp, .unix]) { peer in
            let addresses = peer.ready.controllers.map(\.address)
            #expect(Set(addresses).count == 3)
            #expect(addresses.allSatisfy { UInt8($0.prefix(2), radix: 16).map { $0 & 0xC0 == 0xC0 } == true })
            #expect(Set(peer.transports).count == 3)
        }
    }

    @Test func peripheralServesTheGATTServicesOfItsDescriptionFile() async throws {
        let description = """
            {"services": [{"uuid": "180D", "characteristics": [{"uuid": "2A37", "properties": ["READ", "NOTIFY"], "value": "0001"}]},
                          {"uuid": "\(Self.uuid128)", "characteristics": [{"uuid": "6E400002-B5A3-F393-E0A9-E50E24DCCA9E", "properties": ["WRITE"]}]}]}
            """
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("gatt-\(UUID().uuidString).json")
        try Data(description.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withBumblePeer([.tcp], arguments: ["--peripheral", "--gatt", file.path]) { peer in
            let transport = try await TransportSpec(parsing: peer.transports[0]).open()
            defer { Task { await transport.close() } }
            var hci = RawHCI(transport)
            try await hci.bringUp(randomAddress: randomStaticAddress(0x02).bytes)
            let device = try #require(peer.ready.device?.address)
            let deviceBytes = device.split(separator: ":").reversed().compactMap { UInt8($0, radix: 16) }
            // LE Create Connection to the device's random address, own address random.
            try await hci.command(0x200D, [0x10, 0x00, 0x10, 0x00, 0x00, 0x01] + deviceBytes
                + [0x01, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0xF4, 0x01, 0x00, 0x00, 0x00, 0x00])
            let complete = try await hci.leMeta(0x01)
            #expect(complete[0] == 0x00, "LE Connection Complete status")
            let handle = UInt16(complete[1]) | UInt16(complete[2]) << 8

            // Read By Group Type (primary services) until Attribute Not Found, as a GATT client would.
            var start: UInt16 = 0x0001
            var services: [UInt8] = []
            while true {
                let att: [UInt8] = [0x10, UInt8(start & 0xFF), UInt8(start >> 8), 0xFF, 0xFF, 0x00, 0x28]
                let l2cap = [UInt8(att.count), 0x00, 0x04, 0x00] + att
                try await transport.send(HCIPacket(type: .acl, payload: [UInt8(handle & 0xFF), UInt8(handle >> 8), UInt8(l2cap.count), 0x00] + l2cap))
                let response = try await hci.next("an ATT response") { packet in
                    let p = Array(packet.payload)
                    return packet.type == .acl && p.count > 8 && p[6] == 0x04 && (p[8] == 0x11 || p[8] == 0x01)
                }
                let pdu = Array(response.payload.dropFirst(8))
                if pdu[0] == 0x01 { break }  // Error Response: Attribute Not Found ends the discovery
                services += pdu
                let entryLength = Int(pdu[1])
                let lastEnd = UInt16(pdu[pdu.count - entryLength + 2]) | UInt16(pdu[pdu.count - entryLength + 3]) << 8
                if lastEnd == 0xFFFF { break }
                start = lastEnd + 1
            }
            #expect(services.containsSequence([0x0D, 0x18]), "Heart Rate service from the description")
            #expect(services.containsSequence(Self.uuid128Bytes), "128-bit service from the description")
        }
    }

    @Test func centralConnectsToAnAdvertisingHost() async throws {
        let own = randomStaticAddress(0x03)
        try await withBumblePeer([.tcp], arguments: ["--central", own.text]) { peer in
            let transport = try await TransportSpec(parsing: peer.transports[0]).open()
            defer { Task { await transport.close() } }
            var hci = RawHCI(transport)
            try await hci.bringUp(randomAddress: own.bytes)
            // Connectable undirected advertising from our random address.
            try await hci.command(0x2006, [0x20, 0x00, 0x20, 0x00, 0x00, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0x07, 0x00])
            let data: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x09, 0x42, 0x57]
            try await hci.command(0x2008, [UInt8(data.count)] + data + [UInt8](repeating: 0, count: 31 - data.count))
            try await hci.command(0x200A, [0x01])
            let complete = try await hci.leMeta(0x01)
            #expect(complete[0] == 0x00, "LE Connection Complete status")
            #expect(complete[3] == 0x01, "we are the peripheral")
            var events = peer.events.makeAsyncIterator()
            let connected = await events.next()
            #expect(connected?.contains("\"connected\": \"\(own.text)\"") == true, "peer reported \(connected ?? "nothing")")
        }
    }
}
