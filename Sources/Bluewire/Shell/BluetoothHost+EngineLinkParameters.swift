import BluewireCore
import BluewireHCI
import BluewireHostEngine
import Synchronization

extension BluetoothHost {
    /// `Connection.requestDataLength`: the engine's `.setDataLength`, done on
    /// LE Set Data Length's Command Complete (Core Vol 4 Part E §7.8.33).
    func engineRequestDataLength(_ engineHost: EngineHost, handle: UInt16, txOctets: UInt16, txTime: UInt16) async throws(HostError) {
        guard phase == .starting || phase == .running else { throw .notRunning }
        let result = await engineHost.perform(.setDataLength(connection: handle, txOctets: txOctets, txTime: txTime))
        if case .failure(let error) = result { throw engineLinkParameterError(error, opcode: .leSetDataLength) }
    }

    /// `Connection.updateParameters`: the engine's `.updateConnection`, which
    /// finishes at LE Connection Update Complete (§7.7.65.3), after `HostEvent.connectionUpdated`
    /// was published. An update the
    /// controller refuses in its Complete event fails with that status.
    func engineUpdateParameters(_ engineHost: EngineHost, handle: UInt16, _ parameters: LEConnectionParameters) async throws(HostError) {
        guard phase == .starting || phase == .running else { throw .notRunning }
        let result = await engineHost.perform(.updateConnection(connection: handle, parameters))
        if case .failure(let error) = result { throw engineLinkParameterError(error, opcode: .leConnectionUpdate) }
    }

    /// `Connection.requestPHY`: the engine's `.setPHY`, done on LE Set PHY's
    /// Command Status (§7.8.49). `timeout` bounds the caller's wait, as it bounds any
    /// command's (some controllers never answer LE Set PHY): past it the call fails with
    /// `.command(.timeout(.leSetPHY))`, while the engine's procedure keeps its place until the
    /// configuration's command timeout.
    func engineRequestPHY(_ engineHost: EngineHost, handle: UInt16, tx: LEPHYSet, rx: LEPHYSet, timeout: TimeSpan) async throws(HostError) {
        guard phase == .starting || phase == .running else { throw .notRunning }
        let clock = self.clock
        let deadline = clock.now + timeout
        let result: Result<HostCompletion, HostEngineError>? = await withCheckedContinuation { continuation in
            let gate = ResumeOnce(continuation)
            let timer = Task {
                try? await clock.sleep(until: deadline)
                gate.resume(nil)
            }
            Task {
                gate.resume(await engineHost.perform(.setPHY(connection: handle, tx: tx, rx: rx)))
                timer.cancel()
            }
        }
        switch result {
        case nil: throw .command(.timeout(.leSetPHY))
        case .failure(let error)?: throw engineLinkParameterError(error, opcode: .leSetPHY)
        case .success?: return
        }
    }

    /// The engine checks the link and the values before it sends these commands. Its refusals are reported as the controller
    /// answers them (Core Vol 1 Part F §1.3): Unknown Connection Identifier for a link that is gone
    /// (or went before the request finished), Invalid HCI Command Parameters for values outside the
    /// command's ranges. A command cancelled with everything else says why, as `send` does.
    func engineLinkParameterError(_ error: HostEngineError, opcode: HCIOpcode) -> HostError {
        switch error {
        case .unknownConnection, .disconnected:
            return .command(.failed(opcode, .unknownConnectionIdentifier))
        case .linkParameters:
            return .command(.failed(opcode, .invalidHCICommandParameters))
        case .command(.cancelled):
            return commandCancellationCause ?? .command(.cancelled(opcode))
        case .notRunning, .transportEnded:
            return commandCancellationCause ?? .notRunning
        default:
            return engineHostError(error)
        }
    }
}

/// Resumes a continuation with the first value given to it; later ones are dropped.
fileprivate final class ResumeOnce<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>

    init(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation = Mutex(continuation)
    }

    func resume(_ value: Value) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }
}
