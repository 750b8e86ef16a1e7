import BluewireCore
import BluewireHCI
import BluewireSMP

// Left out of builds with BLUEWIRE_NO_SECURITY; HostEngine+NoSecurity stands in.
#if !BLUEWIRE_NO_SECURITY

/// Pairing with the controller's crypto (`SMPCrypto.controller`): each input of a link's `PairingSession`
/// runs on a copy of the session whose primitives look their results up among the controller's answers
/// (`ControllerCryptoAttempt`). When one is missing, the copy is dropped, the controller is asked (LE Encrypt,
/// LE Rand, LE Read Local P-256 Public Key, LE Generate DHKey), and the input runs again from the same
/// session once the answer arrived; only an attempt that needed nothing more is kept and acted on. Inputs
/// that arrive meanwhile wait their turn. With any other crypto an input runs once, directly.
extension HostEngine {
    /// Crypto commands sent to the controller for pairings so far (each is one HCI round trip).
    public var controllerCryptoCommandCount: Int { security.cryptoCommandsSent }

    /// The configuration pairing runs with: nil without one, and nil when it asks for the controller's crypto
    /// and the controller lacks any of the four commands (pairing is then not supported, §3.5.5).
    var pairingConfiguration: HostSecurityConfiguration? {
        guard let configuration = security.configuration else { return nil }
        guard configuration.crypto.usesController else { return configuration }
        guard let commands = controller?.supportedCommands else { return nil }
        for opcode in [HCIOpcode.leEncrypt, .leRand, .leReadLocalP256PublicKey, .leGenerateDHKey]
        where commands.supports(opcode) != true {
            return nil
        }
        return configuration
    }

    /// Runs `input` on the link's session `session` (stored as the link's session first) and acts on the result.
    mutating func drive(_ handle: UInt16, _ session: PairingSession<SMPCrypto>, _ input: PairingInput) {
        guard links.index(forKey: handle) != nil else { return }
        links[handle]?.security.session = session
        guard session.crypto.usesController else {
            var running = session
            let actions = running.apply(input, now: now)
            links[handle]?.security.session = running
            return run(actions, handle: handle)
        }
        if links[handle]?.security.cryptoWaiting != nil {
            links[handle]?.security.cryptoQueue.append(input)
            return
        }
        attempt(handle, input)
    }

    /// One attempt at `input` with the answers known so far.
    mutating func attempt(_ handle: UInt16, _ input: PairingInput) {
        guard let link = links[handle], var running = link.security.session else { return }
        let trial = ControllerCryptoAttempt(answers: link.security.cryptoAnswers)
        running.crypto = trial.crypto
        let actions = running.apply(input, now: now)
        if let missing = trial.missing {
            links[handle]?.security.cryptoWaiting = (input, missing)
            return askController()
        }
        running.crypto = .controller
        links[handle]?.security.session = running
        links[handle]?.security.cryptoWaiting = nil
        links[handle]?.security.cryptoAnswers = []
        run(actions, handle: handle)
        guard let queue = links[handle]?.security.cryptoQueue, !queue.isEmpty else { return }
        links[handle]?.security.cryptoQueue.removeFirst()
        attempt(handle, queue[0])
    }

    /// Sends the next crypto command a link waits for, when none is in flight.
    mutating func askController() {
        guard security.cryptoCommand == nil else { return }
        for handle in links.sortedKeys {
            guard let waiting = links[handle]?.security.cryptoWaiting else { continue }
            let id = commandFlow.enqueue(waiting.request.command)
            security.cryptoCommand = ControllerCryptoCommand(id: id, handle: handle, request: waiting.request)
            security.cryptoCommandsSent += 1
            sendCommands()
            return
        }
    }

    /// Command Complete or Command Status (or a timeout) for a command; true when it was the crypto command.
    mutating func cryptoCommandAnswered(_ completion: CommandCompletion) -> Bool {
        guard let command = security.cryptoCommand, command.id == completion.id else { return false }
        switch completion.result {
        case .failure:
            cryptoAnswered(nil)
        case .success(.status):
            // Accepted: LE Read Local P-256 Public Key Complete or LE Generate DHKey Complete follows.
            if !command.request.answeredByEvent { cryptoAnswered(nil) }
        case .success(.complete(let complete)):
            // Status, then Encrypted_Data (16) or Random_Number (8), least significant octet first.
            let parameters = Array(complete.returnParameters.dropFirst())
            switch command.request {
            case .encrypt: cryptoAnswered(parameters.count == 16 ? Array(parameters.reversed()) : nil)
            case .random: cryptoAnswered(parameters.count == 8 ? parameters : nil)
            case .localPublicKey, .dhKey: cryptoAnswered(nil)
            }
        }
        return true
    }

    /// LE Read Local P-256 Public Key Complete (subevent 0x08: Status, X, Y) or LE Generate DHKey Complete
    /// (0x09: Status, DHKey), each value 32 octets least significant first (Core Vol 4 Part E §7.7.65.8–9).
    mutating func cryptoEvent(subevent: UInt8, _ parameters: ArraySlice<UInt8>) {
        guard let command = security.cryptoCommand else { return }
        let values = Array(parameters.dropFirst())
        let succeeded = parameters.first == 0x00
        switch (subevent, command.request) {
        case (0x08, .localPublicKey):
            guard succeeded, values.count == 64 else { return cryptoAnswered(nil) }
            cryptoAnswered(values[0..<32].reversed() + values[32..<64].reversed())
        case (0x09, .dhKey):
            // A remote key not on the curve fails here (the controller's check, CVE-2018-5383).
            guard succeeded, values.count == 32 else { return cryptoAnswered(nil) }
            cryptoAnswered(values.reversed())
        default:
            break
        }
    }

    /// The controller answered the command in flight: the waiting input runs again with the answer.
    mutating func cryptoAnswered(_ result: [UInt8]?) {
        guard let command = security.cryptoCommand else { return }
        security.cryptoCommand = nil
        if let waiting = links[command.handle]?.security.cryptoWaiting, waiting.request == command.request {
            links[command.handle]?.security.cryptoAnswers.append(ControllerCryptoAnswer(request: command.request, result: result))
            attempt(command.handle, waiting.input)
        }
        askController()
    }

    /// The session ended without the controller (its timer expired): what waited for an answer is dropped.
    mutating func dropCryptoWaiting(_ handle: UInt16) {
        links[handle]?.security.cryptoWaiting = nil
        links[handle]?.security.cryptoQueue = []
        links[handle]?.security.cryptoAnswers = []
    }
}

#endif  // !BLUEWIRE_NO_SECURITY
