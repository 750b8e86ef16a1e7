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
        case failed(Failure)
    }

    /// Why a run failed, in words for the one-line error.
    enum Failure: CustomStringConvertible {
        /// The channel ended otherwise than by a close.
        case ended(L2CAPChannelError)
        /// An SDU read from stdin could not be sent.
        case unsent(L2CAPChannelError)

        var description: String {
            switch self {
            case .ended(let error): "\(error)"
            case .unsent(let error): "an SDU from standard input was not sent: \(error)"
            }
        }
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

    /// What `l2cap connect`/`listen` do when standard input ends (netcat's default, `-N`, `-q S`).
    enum EndOfInput: Equatable {
        /// Everything is sent; the channel stays open and what arrives is printed until the peer closes it.
        case keepReading
        /// Everything is sent, then (after the delay) the channel is closed, orderly: the
        /// Disconnection Request follows the last K-frame (`L2CAPChannel.close()`).
        case close(after: Duration)
    }

    /// Runs the channel until it ends. With `echo`, every SDU received is sent back and stdin is
    /// not read. Every SDU read from stdin is sent before the channel is closed by us; one that
    /// could not be sent (the peer closed first, the link went) makes the outcome a failure naming
    /// why, whatever ended the channel.
    static func run(_ channel: L2CAPChannel, options: L2CAPNetcatOptions, echo: Bool = false) async -> Outcome {
        let atEnd = options.atEndOfInput
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
            // Stopped by the channel's end, not by end of input: nothing more to do.
            if Task.isCancelled { return nil }
            guard case .close(let delay) = atEnd else { return nil }
            if delay > .zero {
                do { try await Task.sleep(for: delay) } catch { return nil }
            }
            // Orderly: whatever is still queued for credits goes out before the Disconnection Request.
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
        // A send the channel's end interrupted fails with that end: it is the command's failure.
        let unsent = await sender?.value
        let reason = failure ?? channel.endReason ?? .closed(.local)
        if options.json {
            say(JSONLine.make(["event": "closed", "reason": "\(reason)"]))
        }
        if let unsent { return .failed(.unsent(unsent)) }
        switch reason {
        case .closed(.remote): return .closed(byPeer: true)
        case .closed(.local): return .closed(byPeer: false)
        default: return .failed(.ended(reason))
        }
    }
}

/// One line on stderr (progress and diagnostics never go to stdout, Docs/CommandLine.md).
func note(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
