import BluewireATT
import BluewireCore
import Foundation
import Testing
@testable import BluewireGATT

/// Docs/DatabaseFormat.md's table of permission lists and what a read gets on each kind of link,
/// checked row by row against the server: the documented rules and the code cannot drift apart.
@Suite("Docs/DatabaseFormat.md: permission rules")
struct DatabaseFormatPermissionTests {
    static let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Docs/DatabaseFormat.md")

    /// The rows of the table whose header starts `| `perms` | unencrypted link |`: the JSON list and
    /// the three outcomes.
    static func rows() throws -> [(perms: String, outcomes: [String])] {
        let lines = try String(contentsOf: document, encoding: .utf8).split(separator: "\n").map(String.init)
        guard let header = lines.firstIndex(where: { $0.hasPrefix("| `perms` | unencrypted link |") }) else { return [] }
        var rows: [(String, [String])] = []
        for line in lines[(header + 2)...] {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            rows.append((cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`")), Array(cells[1...])))
        }
        return rows
    }

    static func expected(_ outcome: String) -> ATTErrorCode? {
        switch outcome {
        case "read": nil
        case "Insufficient Encryption": .insufficientEncryption
        case "Insufficient Authentication": .insufficientAuthentication
        case "Read Not Permitted": .readNotPermitted
        default: .unlikelyError
        }
    }

    @Test("every documented permission list reads as the table says, from a database file")
    func documentedReadsHold() throws {
        let rows = try Self.rows()
        #expect(rows.count >= 5, "the permissions table is in Docs/DatabaseFormat.md")
        #expect(rows.contains { $0.perms == #"["read_encrypted"]"# && $0.outcomes[1] == "read" },
                "read_encrypted alone is readable on an encrypted link")
        for row in rows {
            let database = try GATTDatabase(json: """
                { "attributes": [
                  { "handle": "0x0001", "type": "0x2800", "value": "e0ff", "perms": ["read"] },
                  { "handle": "0x0002", "type": "0x2803", "value": "020300e1ff", "perms": ["read"] },
                  { "handle": "0x0003", "type": "0xffe1", "value": "2a", "perms": \(row.perms) } ] }
                """)
            var server = GATTServer(database: database)
            server.connect(conn)
            for (level, outcome) in zip([GATTSecurityLevel.none, .encrypted, .authenticated], row.outcomes) {
                #expect(outcome == "read" || Self.expected(outcome) != .unlikelyError, "unknown outcome \(outcome)")
                server.setSecurityLevel(level, for: conn)
                let response = server.exchange([0x0A, 0x03, 0x00])
                let wanted: [UInt8] = Self.expected(outcome).map { [0x01, 0x0A, 0x03, 0x00, $0.rawValue] } ?? [0x0B, 0x2A]
                #expect(response == wanted, "perms \(row.perms) at \(level): \(outcome)")
            }
        }
    }
}
