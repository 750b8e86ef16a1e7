import BluewireAnalysis
import BluewireSnoop
import Foundation
import PeerTestSupport
import Testing

/// `decode` and `analyze` on credit based channel traffic: `Captures/bluewire_l2cap_coc_echo.btsnoop` is
/// `bluewire l2cap send --psm 0x80 --count 12 --length 300 --echo` against bumble_coc.py (bumble's MPS 100,
/// ours 247), so each 300-octet SDU goes out in 4 K-frames and comes back in 2. tshark is the oracle for
/// the SDU starts and their lengths.
@Suite("Credit based channels in decode and analyze")
struct AnalyzeCreditBasedChannelTests {
    static let file = "bluewire_l2cap_coc_echo.btsnoop"
    static let records = CaptureReader.readAll(AnalysisFixtures.bytes(file)).records

    @Test("analyze: one channel, SPSM 0x0080, both MTU/MPS, credits, 12 SDUs of 300 octets each way")
    func channelReport() throws {
        let analysis = CaptureAnalyzer.analyze(Self.records)
        let connection = try #require(analysis.connections.first)
        try #require(connection.channels.count == 1)
        let channel = connection.channels[0]
        #expect(channel.psm == 0x0080 && !channel.enhanced && channel.openedLocally)
        #expect(channel.localMTU == 512 && channel.localMPS == 247)
        #expect(channel.remoteMTU == 512 && channel.remoteMPS == 100, "bumble_coc.py's default MPS")
        #expect(channel.sdusSent == 12 && channel.octetsSent == 3_600 && channel.kFramesSent == 48)
        #expect(channel.sdusReceived == 12 && channel.octetsReceived == 3_600 && channel.kFramesReceived == 24)
        // Initial credits (16 given, 8 received) plus every Flow Control Credit Ind after them.
        #expect(channel.creditsGiven >= 16 && channel.creditsReceived >= 8)
        #expect(channel.creditsReceived >= channel.kFramesSent, "no K-frame was sent without a credit")
        #expect(channel.closedAtRecord != nil)
        let json = analysis.json
        #expect(json.contains(#""channels":[{"spsm":"0x0080""#), "\(json.prefix(400))")
        #expect(analysis.text.contains("channel SPSM 0x0080 (dynamic)"))
    }

    @Test("decode: each SDU start shows its length, as tshark's btl2cap.le_sdu_length does, frame for frame")
    func sduStartsMatchTshark() throws {
        var describer = PacketDescriber()
        var mine: [String] = []
        for record in Self.records {
            let description = describer.description(of: record)
            if description.line.contains("K-frame"), let range = description.line.range(of: "sdu_length=") {
                let length = description.line[range.upperBound...].prefix { $0.isNumber }
                mine.append("\(record.index + 1) \(length)")
            }
        }
        let path = AnalysisFixtures.captures.appendingPathComponent(Self.file).path
        let output = try Self.tshark(["-r", path, "-Y", "btl2cap.le_sdu_length", "-T", "fields", "-e", "frame.number",
                                      "-e", "btl2cap.le_sdu_length"])
        let theirs = output.split(separator: "\n").map { $0.split(separator: "\t").joined(separator: " ") }
        #expect(theirs.count == 24)
        #expect(mine == theirs)
    }

    static func tshark(_ arguments: [String]) throws -> String {
        try ChildProcess.runBlocking(URL(fileURLWithPath: "/usr/bin/env"), ["tshark"] + arguments).standardOutput
    }
}
