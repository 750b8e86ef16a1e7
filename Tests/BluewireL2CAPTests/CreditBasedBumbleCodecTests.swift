import BluewireCore
import Foundation
import PeerTestSupport
import Testing

@testable import BluewireL2CAP

/// The credit based signaling commands against bumble's L2CAP codec (bumble 0.0.236, the test
/// environment's): what bumble encodes we decode to the intended fields, and what we encode bumble
/// parses as the same command and re-encodes byte for byte.
@Suite struct CreditBasedBumbleCodecTests {
    static let bumbleEncodes = #"""
    from bumble import l2cap as L
    R = L.L2CAP_LE_Credit_Based_Connection_Response.Result
    E = L.L2CAP_Credit_Based_Connection_Response.Result
    C = L.L2CAP_Credit_Based_Reconfigure_Response.Result
    for f in [
        L.L2CAP_LE_Credit_Based_Connection_Request(identifier=5, le_psm=0x80, source_cid=0x40, mtu=512, mps=247, initial_credits=10),
        L.L2CAP_LE_Credit_Based_Connection_Response(identifier=5, destination_cid=0x41, mtu=100, mps=50, initial_credits=3,
            result=R.CONNECTION_REFUSED_INSUFFICIENT_ENCRYPTION),
        L.L2CAP_LE_Flow_Control_Credit(identifier=6, cid=0x40, credits=7),
        L.L2CAP_Credit_Based_Connection_Request(identifier=7, spsm=0x27, mtu=64, mps=64, initial_credits=1,
            source_cid=[0x40, 0x41, 0x42, 0x43, 0x44]),
        L.L2CAP_Credit_Based_Connection_Response(identifier=7, mtu=64, mps=64, initial_credits=1,
            result=E.SOME_CONNECTIONS_REFUSED_INVALID_SOURCE_CID, destination_cid=[0x50, 0]),
        L.L2CAP_Credit_Based_Reconfigure_Request(identifier=8, mtu=128, mps=100, destination_cid=[0x50, 0x51]),
        L.L2CAP_Credit_Based_Reconfigure_Response(identifier=8, result=C.RECONFIGURATION_FAILED_REDUCTION_IN_SIZE_OF_MTU_NOT_ALLOWED),
        L.L2CAP_Disconnection_Request(identifier=9, destination_cid=0x40, source_cid=0x41),
        L.L2CAP_Disconnection_Response(identifier=9, destination_cid=0x40, source_cid=0x41),
    ]:
        print(bytes(f).hex())
    """#

    static let bumbleParses = #"""
    import sys
    from bumble import l2cap as L
    for h in sys.argv[1:]:
        f = L.L2CAP_Control_Frame.from_bytes(bytes.fromhex(h))
        print(type(f).__name__, bytes(f).hex())
    """#

    static let expected: [LESignalingCommand] = [
        .init(identifier: 5, body: .leCreditBasedConnectionRequest(spsm: 0x80, sourceCID: 0x40, mtu: 512, mps: 247, initialCredits: 10)),
        .init(identifier: 5, body: .leCreditBasedConnectionResponse(
            destinationCID: 0x41, mtu: 100, mps: 50, initialCredits: 3, result: .insufficientEncryption)),
        .init(identifier: 6, body: .flowControlCreditIndication(cid: 0x40, credits: 7)),
        .init(identifier: 7, body: .creditBasedConnectionRequest(
            spsm: 0x27, mtu: 64, mps: 64, initialCredits: 1, sourceCIDs: L2CAPCIDList([0x40, 0x41, 0x42, 0x43, 0x44]))),
        .init(identifier: 7, body: .creditBasedConnectionResponse(
            mtu: 64, mps: 64, initialCredits: 1, result: .someRefusedInvalidSourceCID, destinationCIDs: L2CAPCIDList([0x50, 0]))),
        .init(identifier: 8, body: .creditBasedReconfigureRequest(mtu: 128, mps: 100, destinationCIDs: L2CAPCIDList([0x50, 0x51]))),
        .init(identifier: 8, body: .creditBasedReconfigureResponse(result: .reductionInMTUNotAllowed)),
        .init(identifier: 9, body: .disconnectionRequest(destinationCID: 0x40, sourceCID: 0x41)),
        .init(identifier: 9, body: .disconnectionResponse(destinationCID: 0x40, sourceCID: 0x41)),
    ]

    static let bumbleNames = [
        "L2CAP_LE_Credit_Based_Connection_Request", "L2CAP_LE_Credit_Based_Connection_Response", "L2CAP_LE_Flow_Control_Credit",
        "L2CAP_Credit_Based_Connection_Request", "L2CAP_Credit_Based_Connection_Response",
        "L2CAP_Credit_Based_Reconfigure_Request", "L2CAP_Credit_Based_Reconfigure_Response",
        "L2CAP_Disconnection_Request", "L2CAP_Disconnection_Response",
    ]

    func python(_ script: String, _ arguments: [String] = []) throws -> [String] {
        try PeerRequirement.requireBumble()
        let run = try ChildProcess.runBlocking(BumblePeer.python, ["-c", script] + arguments)
        #expect(run.status == 0, "\(run.standardError)")
        return run.outputLines
    }

    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex), index != hex.endIndex {
            out.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return out
    }

    @Test func whatBumbleEncodesDecodesToTheSameCommand() throws {
        let lines = try python(Self.bumbleEncodes)
        #expect(lines.count == Self.expected.count)
        for (line, command) in zip(lines, Self.expected) {
            let decoded = try LESignalingCommand(decoding: Self.bytes(line))
            #expect(decoded == command, "bumble \(line)")
            #expect(decoded.encode() == Self.bytes(line))
        }
    }

    @Test func whatWeEncodeBumbleParsesAsTheSameCommand() throws {
        let ours = Self.expected.map { hexString($0.encode()) }
        let lines = try python(Self.bumbleParses, ours)
        #expect(lines.count == ours.count)
        for (index, line) in lines.enumerated() where index < ours.count {
            #expect(line == "\(Self.bumbleNames[index]) \(ours[index])")
        }
    }
}
