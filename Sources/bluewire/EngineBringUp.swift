import Bluewire
import BluewireReplay
import BluewireTransport

extension EngineHost {
    /// A command's start on the engine host: bring-up (Reset and the rest, Docs/Design.md), then
    /// clearing what a previous program left on the controller (bumble's Reset clears nothing, and a
    /// pending connection attempt, a scan or advertising left on would make ours Command Disallowed).
    /// The engine does that clearing as the end of bring-up (`clearsControllerLeftoversAtStart`, set by
    /// `startEngineHost`), so a command that loads bonds sends it before the resolving list whatever
    /// the controller's timing. `oldCaptures` (a host made with that option off): a separate request
    /// after bring-up, and in a replay only if the recording host did it too, as `BluetoothHost`
    /// commands did: `Captures/bluewire_scan_bumble.btsnoop` was recorded before that step
    /// (`LiveOptions.recordedLeftoverClearing`, which looks at the capture's next host packet, so only
    /// for a command whose engine sends nothing of its own after bring-up: no resolving list to load).
    /// A failed bring-up closes the host and ends the process with status 1, naming the command that
    /// failed and why (`controller bring-up failed at Reset (0x0c03): ...`).
    func bringUpForCommand(oldCaptures: Bool = false) async {
        switch await perform(.start) {
        case .failure(let error) where transportFailure != nil:
            // The stream failed under bring-up: say what the controller did (closed it, sent bytes
            // that are not H4), not "not running". An emulated controller that already serves a host
            // closes a second one's connection at once (scripts/controller.sh), hence the hint.
            let cause = bringUpStreamFailure ?? "\(error)"
            var hint = ": is another program using it? A controller serves one host at a time"
            if case .framing = transportFailure { hint = "" }
            await close()
            fail("controller bring-up failed: \(cause)\(hint)")
        case .failure(.bringUp(let error)):
            await close()
            fail("\(error)")
        case .failure(let error):
            await close()
            fail("controller bring-up failed: \(error)")
        case .success:
            break
        }
        guard oldCaptures else { return }
        if let replay = Self.replay(under: transport), await !LiveOptions.recordedLeftoverClearing(replay) { return }
        _ = await perform(.clearControllerLeftovers)
    }

    /// The replay `transport` is, or wraps (`--capture`, `--verbose`); nil for a live controller.
    static func replay(under transport: any HCITransport) -> ReplayTransport? {
        if let replay = transport as? ReplayTransport { return replay }
        if let tap = transport as? CaptureTap { return replay(under: tap.base) }
        if let tap = transport as? PacketLogTap { return replay(under: tap.base) }
        return nil
    }
}

/// Runs `work` and says whether it finished within `timeout`; when the timeout comes first the work
/// is cancelled and false returned (a shutdown that must not hang on a peer that stopped answering).
func finishes(within timeout: Duration, _ work: @escaping @Sendable () async -> Void) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            await work()
            return true
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return false
        }
        let first = await group.next() ?? false
        group.cancelAll()
        return first
    }
}
