import Bluewire
import Foundation

/// The netcat part of `l2cap connect` and `l2cap listen`: stdin → SDUs on the channel, SDUs →
/// stdout (raw, or `--json` event lines), until the channel ends.
enum L2CAPNetcat {
    /// How the channel ended, for the exit status.
    enum Outcome {
        /// Closed by the peer, or by us at end of input: status 0.
        case closed(byPeer: Bool)
        /// Anything else (link lost, violation, a send refused): status 1 with the reason.
        case failed(L2CAPChannelError)
    }

    static func opened(_ channel: L2CAPChannel, json: Bool) {
        if json {
            say(JSONLine.make([
                "event": "opened", "cid": Int(channel.cid), "psm": Int(channel.psm.rawValue), "mtu": channel.mtu,
                "mps": channel.mps, "peer_mtu": channel.peerMTU, "peer_mps": channel.peerMPS,
            ]))
        } else {
            note("channel 0x\(hex(channel.cid, width: 4)) opened on SPSM 0x\(hex(channel.psm.rawValue, width: 4)) (peer MTU \(channel.peerMTU), MPS \(channel.peerMPS))")
        }
    }

    /// Runs the channel until it ends. With `echo`, every SDU received is sent back and stdin is
    /// not read.
    static func run(_ channel: L2CAPChannel, options: L2CAPNetcatOptions, echo: Bool = false) async -> Outcome {
        let sender: Task<L2CAPChannelError?, Never>? = echo ? nil : Task {
            let input = StdinSDUs(maximum: channel.peerMTU, lines: options.lines)
            for await sdu in input.stream {
                do throws(L2CAPChannelError) {
                    try await channel.send(sdu)
                } catch {
                    return error
                }
                input.next()
            }
            // End of input: close the channel; the SDU sequence then ends.
            await channel.close()
            return nil
        }
        var failure: L2CAPChannelError?
        do throws(L2CAPChannelError) {
            for try await sdu in channel.sdus {
                if options.json {
                    say(JSONLine.make(["event": "sdu", "length": sdu.count, "data": hexString(sdu)]))
                } else {
                    FileHandle.standardOutput.write(Data(sdu))
                }
                if echo {
                    do throws(L2CAPChannelError) { try await channel.send(sdu) } catch { failure = error; break }
                }
            }
        } catch {
            failure = error
        }
        sender?.cancel()
        let reason = failure ?? channel.endReason ?? .closed(.local)
        if options.json {
            say(JSONLine.make(["event": "closed", "reason": "\(reason)"]))
        }
        switch reason {
        case .closed(.remote): return .closed(byPeer: true)
        case .closed(.local): return .closed(byPeer: false)
        default: return .failed(reason)
        }
    }
}

/// One line on stderr (progress and diagnostics never go to stdout, Docs/CommandLine.md).
func note(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
