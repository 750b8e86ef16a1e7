import BluewireAnalysis
import BluewireCore
import BluewireSnoop
import Testing

/// `analyze`'s security report on synthetic links: the cases the committed pairing captures
/// (`PairingCaptureTests`, which check the successful methods) do not show.
struct AnalyzePairingTests {
    static let peer = BluetoothAddress(0xC0, 0x00, 0x00, 0x00, 0x00, 0x0B, type: .random)

    /// One SMP PDU in one ACL packet (CID 0x0006).
    static func smp(_ script: inout AnalyzeScript, _ handle: UInt16, _ direction: PacketDirection, _ pdu: [UInt8]) {
        let l2cap = AnalyzeScript.le16(UInt16(pdu.count)) + AnalyzeScript.le16(0x0006) + pdu
        let flags: UInt16 = direction == .hostToController ? 0x0000 : 0x2000
        script.packet(.acl, AnalyzeScript.le16(handle | flags) + AnalyzeScript.le16(UInt16(l2cap.count)) + l2cap, direction)
    }

    /// Encryption Change v1 (Core Vol 4 Part E §7.7.8), status 0, encryption on.
    static func encryptionChange(_ script: inout AnalyzeScript, _ handle: UInt16) {
        script.packet(.event, [0x08, 0x04, 0x00] + AnalyzeScript.le16(handle) + [0x01], .controllerToHost)
    }

    @Test("a Pairing Failed from the peer: the method is still derived, the failure named, the link left at level 1")
    func failedPairing() throws {
        var script = AnalyzeScript()
        script.connectionComplete(handle: 0x0040, peer: Self.peer)
        // Initiator KeyboardDisplay + MITM + SC; responder DisplayYesNo + MITM + SC: Numeric Comparison.
        Self.smp(&script, 0x0040, .hostToController, [0x01, 0x04, 0x00, 0x0D, 0x10, 0x00, 0x03])
        Self.smp(&script, 0x0040, .controllerToHost, [0x02, 0x01, 0x00, 0x0D, 0x10, 0x00, 0x03])
        Self.smp(&script, 0x0040, .controllerToHost, [0x05, 0x0C])
        script.disconnection(handle: 0x0040)
        let connection = try #require(script.analysis.connections.first)
        #expect(connection.securityLevel == 1)
        let pairing = try #require(connection.pairings.first)
        #expect(pairing.method == .numericComparison)
        #expect(pairing.methodText == "LE Secure Connections Numeric Comparison")
        #expect(pairing.failure == .numericComparisonFailed && pairing.failureFromLocal == false)
        #expect(!pairing.succeeded && pairing.securityLevel == nil)
        #expect(connection.text.contains("failed: Numeric Comparison Failed (sent by peer)"), "\(connection.text)")
        #expect(script.analysis.json.contains("\"failed\":\"Numeric Comparison Failed\""), "\(script.analysis.json)")
    }

    @Test("encrypted with no pairing in the capture (a bond): the level is unknown, not guessed")
    func bondedEncryption() throws {
        var script = AnalyzeScript()
        script.connectionComplete(handle: 0x0041, peer: Self.peer)
        Self.encryptionChange(&script, 0x0041)
        let connection = try #require(script.analysis.connections.first)
        #expect(connection.encrypted && connection.pairings.isEmpty)
        #expect(connection.securityLevel == nil)
        #expect(connection.text.contains("encrypted with a key from an earlier pairing"), "\(connection.text)")
    }

    @Test("legacy Passkey Entry, the peripheral displays: level 3 once encrypted, a Security Request counted")
    func legacyPasskey() throws {
        var script = AnalyzeScript()
        script.connectionComplete(handle: 0x0042, peer: Self.peer)
        Self.smp(&script, 0x0042, .controllerToHost, [0x0B, 0x05])
        // Initiator KeyboardOnly + MITM, responder DisplayOnly + MITM, no SC: the responder displays.
        Self.smp(&script, 0x0042, .hostToController, [0x01, 0x02, 0x00, 0x05, 0x10, 0x00, 0x01])
        Self.smp(&script, 0x0042, .controllerToHost, [0x02, 0x00, 0x00, 0x05, 0x0C, 0x00, 0x01])
        Self.encryptionChange(&script, 0x0042)
        Self.smp(&script, 0x0042, .controllerToHost, [0x06] + Array(repeating: 0xAB, count: 16))
        Self.smp(&script, 0x0042, .controllerToHost, [0x07, 0x34, 0x12] + Array(repeating: 0x01, count: 8))
        let connection = try #require(script.analysis.connections.first)
        #expect(connection.securityRequests == 1)
        let pairing = try #require(connection.pairings.first)
        #expect(pairing.passkeyRoles == "peer_displays")
        #expect(pairing.keySize == 12, "the smaller maximum")
        #expect(pairing.keysFromPeer == ["ltk", "ediv_rand"])
        #expect(connection.securityLevel == 3, "authenticated legacy key")
    }
}
