import BluewireAnalysis
import BluewireCore
import BluewireGATT
import BluewireSnoop
import Testing

/// The analyzer against the real captures in Captures/, with tshark's counts in INDEX.json as oracle.
@Suite("CaptureAnalyzer on real captures")
struct AnalyzeCaptureTests {
    static let analyses: [String: CaptureAnalysis] = {
        var out: [String: CaptureAnalysis] = [:]
        for name in AnalysisFixtures.names {
            out[name] = CaptureAnalyzer.analyze(CaptureReader.readAll(AnalysisFixtures.bytes(name)).records)
        }
        return out
    }()

    static func hexKey(_ opcode: UInt8) -> String { "0x" + hex(opcode, width: 2) }

    @Test("ATT PDUs per opcode over all connections equal tshark's att_opcode_hist", arguments: AnalysisFixtures.names)
    func attOpcodeCountsMatchTshark(name: String) throws {
        let counts = try #require(AnalysisFixtures.tshark[name])
        let expected = (counts["att_opcode_hist"] as? [String: Int]) ?? [:]
        let analysis = try #require(Self.analyses[name])
        var actual: [String: Int] = [:]
        for (opcode, count) in analysis.attOpcodeCounts { actual[Self.hexKey(opcode)] = count }
        #expect(actual == expected, "\(name): ATT opcodes differ from tshark")
    }

    @Test("connections opened in the capture equal tshark's successful LE and BR/EDR Connection Complete events",
          arguments: AnalysisFixtures.names)
    func establishedConnectionsMatchTshark(name: String) throws {
        let counts = try #require(AnalysisFixtures.tshark[name])
        let analysis = try #require(Self.analyses[name])
        let le = analysis.establishedConnections.filter { $0.transport == .le }.count
        let classic = analysis.establishedConnections.filter { $0.transport == .brEdr }.count
        #expect(le == counts["le_conn_complete_ok"] as? Int, "\(name): LE connections")
        #expect(classic == counts["classic_conn_complete_ok"] as? Int, "\(name): BR/EDR connections")
        let failed = (counts["le_conn_complete_events"] as? Int ?? 0) - (counts["le_conn_complete_ok"] as? Int ?? 0)
            + (counts["classic_conn_complete_events"] as? Int ?? 0) - (counts["classic_conn_complete_ok"] as? Int ?? 0)
        #expect(analysis.failedConnectionAttempts == failed, "\(name): failed connection attempts")
    }

    @Test("every ACL packet of a capture is charged to exactly one connection", arguments: AnalysisFixtures.names)
    func everyACLPacketBelongsToAConnection(name: String) throws {
        let counts = try #require(AnalysisFixtures.tshark[name])
        let analysis = try #require(Self.analyses[name])
        var acl = 0
        for connection in analysis.connections {
            acl += connection.sent.aclPackets + connection.received.aclPackets + connection.aclDecodeErrors
        }
        #expect(acl == counts["hci_acl_frames"] as? Int, "\(name): ACL packets")
    }

    @Test("Data Length Change and PHY Update events are attributed to connections", arguments: AnalysisFixtures.names)
    func linkChangesMatchTshark(name: String) throws {
        let counts = try #require(AnalysisFixtures.tshark[name])
        let analysis = try #require(Self.analyses[name])
        let dataLength = analysis.connections.reduce(0) { $0 + $1.dataLengthChanges.count }
        let phy = analysis.connections.reduce(0) { $0 + $1.phyUpdates.count }
        #expect(dataLength == counts["le_data_length_change"] as? Int, "\(name): data length changes")
        #expect(phy == counts["le_phy_update_complete"] as? Int, "\(name): PHY updates")
    }
}
