import BluewireCore
import BluewireCrypto
import BluewireSMP
import Foundation
import PeerTestSupport
import Testing

/// bumble's own SMP session (Tests/Peers/bumble_smp_session.py runs `bumble.smp.Session`) against a
/// BluewireSMP session in the other role. The link is played by the test: the central's LTK must equal the
/// key the peripheral gives in its LTK Request Reply before Encryption Change is reported to both.
final class BumbleSMPSession {
    let process = Process()
    let input = Pipe()
    let output = Pipe()
    var buffer: [UInt8] = []

    init(io: IOCapability, sc: Bool, mitm: Bool, initiator: Bool) throws {
        process.executableURL = BumblePeer.python
        let script = BumblePeer.repositoryRoot.appendingPathComponent("Tests/Peers/bumble_smp_session.py")
        process.arguments = [script.path, "\(io.rawValue)", sc ? "1" : "0", mitm ? "1" : "0"] + (initiator ? ["initiator"] : [])
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    deinit {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// Sends one command and returns its output lines (up to 'end').
    func command(_ line: String) -> [String] {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
        var lines: [String] = []
        while true {
            while let newline = buffer.firstIndex(of: 0x0A) {
                let text = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                if text == "end" { return lines }
                lines.append(text)
            }
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { return lines + ["eof"] }
            buffer += data
        }
    }
}

func hexString(_ bytes: [UInt8]) -> String { bytes.map { String($0 >> 4, radix: 16) + String($0 & 0xF, radix: 16) }.joined() }

struct BumbleSMPRun {
    var result: PairingResult?
    var failure: PairingFailure?
    var bumblePaired: [String]?
    var bumbleFailed: String?
    var keysMatched = false
    var ourComparison: UInt32?
    var bumbleComparison: UInt32?
}

@Suite(.serialized, .enabled(if: FileManager.default.fileExists(atPath: BumblePeer.python.path), "needs .venv (scripts/setup-test-env.sh)"))
struct BumbleSMPTests {
    /// Which way LE SC OOB data goes before pairing.
    struct OOB: OptionSet { let rawValue: Int; static let toBumble = OOB(rawValue: 1); static let fromBumble = OOB(rawValue: 2) }

    /// Pairs a BluewireSMP session in `role` with bumble in the other role.
    func pair(
        ours: PairingConfiguration, bumbleIO: IOCapability, bumbleSC: Bool, bumbleMITM: Bool, role: SMPRole = .initiator,
        oob: OOB = []
    ) throws -> BumbleSMPRun {
        let bumble = try BumbleSMPSession(io: bumbleIO, sc: bumbleSC, mitm: bumbleMITM, initiator: role == .responder)
        var session = PairingSession(
            role: role, configuration: ours, crypto: SwiftCryptoSMP(),
            initiatorAddress: PairingHarness.centralAddress, responderAddress: PairingHarness.peripheralAddress)
        if oob.contains(.fromBumble) {
            let words = (bumble.command("oob").first ?? "").split(separator: " ").map(String.init)
            if words.count == 3 { session.peerOOBData = (hex(words[2]).reversed(), hex(words[1]).reversed()) }
        }
        if oob.contains(.toBumble) {
            let (r, c) = try session.localOOBData()
            _ = bumble.command("peeroob \(hexString(c.reversed())) \(hexString(r.reversed()))")
        }
        enum Work { case action(SMPAction), line(String) }
        var work: [Work] = role == .initiator
            ? session.start(now: .zero).map { .action($0) } : bumble.command("start").map { .line($0) }
        var run = BumbleSMPRun()
        var displayed: UInt32?
        var passkeyWanted = false
        var steps = 0
        while !work.isEmpty, steps < 500 {
            steps += 1
            switch work.removeFirst() {
            case .action(let action):
                switch action {
                case .send(let pdu):
                    work += bumble.command("pdu " + hexString(pdu.encoded())).map { .line($0) }
                case .startEncryption(let ltk, let ediv, let rand):
                    let reply = bumble.command("ltk \(ediv) \(hexString(rand))")
                    run.keysMatched = reply == ["ltk " + hexString(ltk)]
                    guard run.keysMatched else { break }
                    let lines = bumble.command("encrypted")
                    work += session.encryptionChanged(enabled: true, now: .zero).map { .action($0) }
                    work += lines.map { .line($0) }
                case .displayPasskey(let value):
                    work += bumble.command("passkey \(value)").map { .line($0) }
                case .requestPasskey:
                    if let displayed {
                        work += session.passkeyEntered(displayed, now: .zero).map { .action($0) }
                    } else {
                        passkeyWanted = true
                    }
                case .confirmNumericComparison(let value):
                    run.ourComparison = value
                    work += session.numericComparison(accepted: true, now: .zero).map { .action($0) }
                case .paired(let result): run.result = result
                case .failed(let failure): run.failure = failure
                default: break
                }
            case .line(let line):
                let words = line.split(separator: " ").map(String.init)
                switch words.first {
                case "pdu":
                    work += session.receive(hex(words[1]), now: .zero).map { .action($0) }
                case "display":
                    displayed = UInt32(words[1])
                    if passkeyWanted, let displayed {
                        passkeyWanted = false
                        work += session.passkeyEntered(displayed, now: .zero).map { .action($0) }
                    }
                case "encrypt" where words.count == 4:
                    // bumble as central starts encryption; we are the peripheral and answer the LTK request.
                    let reply = session.longTermKeyRequested(ediv: UInt16(words[2]) ?? 1, rand: hex(words[3]), now: .zero)
                    guard case .longTermKeyReply(let key) = reply.first else { break }
                    run.keysMatched = hexString(key) == words[1]
                    guard run.keysMatched else { break }
                    work += session.encryptionChanged(enabled: true, now: .zero).map { .action($0) }
                    work += bumble.command("encrypted").map { .line($0) }
                case "compare": run.bumbleComparison = UInt32(words[1])
                case "paired": run.bumblePaired = Array(words.dropFirst())
                case "failed": run.bumbleFailed = words.count > 1 ? words[1] : "?"
                default: break
                }
            }
        }
        return run
    }

    func expectPaired(_ run: BumbleSMPRun, _ method: PairingMethod, sc: Bool, ours: PairingConfiguration, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(run.failure == nil && run.bumbleFailed == nil, "\(String(describing: run.failure)) \(String(describing: run.bumbleFailed))", sourceLocation: sourceLocation)
        #expect(run.keysMatched, sourceLocation: sourceLocation)
        #expect(run.result?.method == method, sourceLocation: sourceLocation)
        #expect(run.result?.secureConnections == sc, sourceLocation: sourceLocation)
        guard let bumbleKeys = run.bumblePaired, bumbleKeys.count == 3 else {
            Issue.record("bumble did not pair", sourceLocation: sourceLocation)
            return
        }
        // bumble received our IRK; we received bumble's IRK (bytes 00...0f).
        #expect(bumbleKeys[1] == hexString(ours.identityResolvingKey ?? []), sourceLocation: sourceLocation)
        #expect(run.result?.peerKeys.identityResolvingKey == Array(0..<16), sourceLocation: sourceLocation)
        if sc { #expect(bumbleKeys[0] == hexString(run.result?.longTermKey ?? []), sourceLocation: sourceLocation) }
    }

    @Test func secureConnectionsJustWorks() throws {
        let ours = PairingConfiguration.test(.noInputNoOutput, seed: 1)
        let run = try pair(ours: ours, bumbleIO: .noInputNoOutput, bumbleSC: true, bumbleMITM: false)
        expectPaired(run, .justWorks, sc: true, ours: ours)
    }

    @Test func secureConnectionsNumericComparison() throws {
        let ours = PairingConfiguration.test(.displayYesNo, mitm: true, seed: 1)
        let run = try pair(ours: ours, bumbleIO: .displayYesNo, bumbleSC: true, bumbleMITM: true)
        expectPaired(run, .numericComparison, sc: true, ours: ours)
        #expect(run.ourComparison != nil && run.ourComparison == run.bumbleComparison)
    }

    @Test func secureConnectionsPasskeyBumbleDisplays() throws {
        let ours = PairingConfiguration.test(.keyboardOnly, mitm: true, seed: 1)
        let run = try pair(ours: ours, bumbleIO: .displayOnly, bumbleSC: true, bumbleMITM: true)
        expectPaired(run, .passkeyEntry(.responderDisplays), sc: true, ours: ours)
    }

    @Test func secureConnectionsPasskeyWeDisplay() throws {
        let ours = PairingConfiguration.test(.displayOnly, mitm: true, seed: 1)
        let run = try pair(ours: ours, bumbleIO: .keyboardOnly, bumbleSC: true, bumbleMITM: true)
        expectPaired(run, .passkeyEntry(.initiatorDisplays), sc: true, ours: ours)
    }

    @Test func legacyJustWorks() throws {
        let ours = PairingConfiguration.test(.noInputNoOutput, sc: false, seed: 1)
        let run = try pair(ours: ours, bumbleIO: .noInputNoOutput, bumbleSC: false, bumbleMITM: false)
        expectPaired(run, .justWorks, sc: false, ours: ours)
        #expect(run.result?.peerKeys.longTermKey?.count == 16)
    }

    @Test func legacyPasskeyBumbleDisplays() throws {
        let ours = PairingConfiguration.test(.keyboardOnly, sc: false, mitm: true, seed: 1)
        let run = try pair(ours: ours, bumbleIO: .displayOnly, bumbleSC: false, bumbleMITM: true)
        expectPaired(run, .passkeyEntry(.responderDisplays), sc: false, ours: ours)
    }

    // MARK: bumble as initiator, BluewireSMP as responder

    @Test func responderSecureConnectionsJustWorks() throws {
        let ours = PairingConfiguration.test(.noInputNoOutput, seed: 1)
        let run = try pair(ours: ours, bumbleIO: .noInputNoOutput, bumbleSC: true, bumbleMITM: false, role: .responder)
        expectPaired(run, .justWorks, sc: true, ours: ours)
    }

    @Test func responderSecureConnectionsNumericComparison() throws {
        let ours = PairingConfiguration.test(.keyboardDisplay, mitm: true, seed: 1)
        let run = try pair(ours: ours, bumbleIO: .displayYesNo, bumbleSC: true, bumbleMITM: true, role: .responder)
        expectPaired(run, .numericComparison, sc: true, ours: ours)
        #expect(run.ourComparison != nil && run.ourComparison == run.bumbleComparison)
    }

    @Test func responderSecureConnectionsPasskeyWeDisplay() throws {
        let ours = PairingConfiguration.test(.displayOnly, mitm: true, seed: 1)
        let run = try pair(ours: ours, bumbleIO: .keyboardOnly, bumbleSC: true, bumbleMITM: true, role: .responder)
        expectPaired(run, .passkeyEntry(.responderDisplays), sc: true, ours: ours)
    }

    @Test func responderSecureConnectionsPasskeyBumbleDisplays() throws {
        let ours = PairingConfiguration.test(.keyboardOnly, mitm: true, seed: 1)
        let run = try pair(ours: ours, bumbleIO: .displayOnly, bumbleSC: true, bumbleMITM: true, role: .responder)
        expectPaired(run, .passkeyEntry(.initiatorDisplays), sc: true, ours: ours)
    }

    @Test func responderLegacyJustWorks() throws {
        let ours = PairingConfiguration.test(.noInputNoOutput, sc: false, seed: 1)
        let run = try pair(ours: ours, bumbleIO: .noInputNoOutput, bumbleSC: false, bumbleMITM: false, role: .responder)
        expectPaired(run, .justWorks, sc: false, ours: ours)
    }

    @Test func responderLegacyPasskeyWeDisplay() throws {
        let ours = PairingConfiguration.test(.displayOnly, sc: false, mitm: true, seed: 1)
        let run = try pair(ours: ours, bumbleIO: .keyboardOnly, bumbleSC: false, bumbleMITM: true, role: .responder)
        expectPaired(run, .passkeyEntry(.responderDisplays), sc: false, ours: ours)
    }

    // MARK: LE SC OOB with bumble

    @Test("LE SC OOB with bumble as responder", arguments: [[.toBumble, .fromBumble], [.toBumble], [.fromBumble]] as [OOB])
    func outOfBand(direction: OOB) throws {
        let ours = PairingConfiguration.test(.noInputNoOutput, seed: 1)
        let run = try pair(ours: ours, bumbleIO: .noInputNoOutput, bumbleSC: true, bumbleMITM: true, oob: direction)
        expectPaired(run, .outOfBand, sc: true, ours: ours)
    }

    @Test("LE SC OOB with bumble as initiator", arguments: [[.toBumble, .fromBumble], [.toBumble], [.fromBumble]] as [OOB])
    func responderOutOfBand(direction: OOB) throws {
        let ours = PairingConfiguration.test(.noInputNoOutput, seed: 1)
        let run = try pair(ours: ours, bumbleIO: .noInputNoOutput, bumbleSC: true, bumbleMITM: true, role: .responder, oob: direction)
        expectPaired(run, .outOfBand, sc: true, ours: ours)
    }
}
