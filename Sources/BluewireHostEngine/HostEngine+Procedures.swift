import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireL2CAP

/// One command of a controller procedure. An optional one may fail (refused, unknown, timed out)
/// without failing the procedure: LE Set Default PHY, LE Set Data Length (bumble answers that
/// one with a bare status 0x01) and disabling something already off.
struct ProcedureCommand: Hashable, Sendable {
    var command: HCICommand
    var optional: Bool
}

/// What a procedure does when its last command is answered.
enum ProcedureKind: Hashable, Sendable {
    case bringUp
    /// The end of bring-up with `clearsControllerLeftoversAtStart`: `start` completes when it finishes.
    case clearLeftoversAtStart
    case startScan
    case stopScan
    /// The start numbered `generation` (`AdvertisingState.generation`).
    case startAdvertising(generation: UInt32, enables: Bool)
    case stopAdvertising
    case resumeAdvertising
    case connect
    case cancelConnect
    case disconnect(UInt16)
    /// LE Enable Encryption on a link: Encryption Change finishes it (HostEngine+Security).
    case encrypt(UInt16)
    /// LE Read Resolving List Size; then LE Clear Resolving List, LE Add Device To Resolving List for
    /// each bond with an IRK and LE Set Address Resolution Enable (HostEngine+ResolvingList).
    case readResolvingListSize
    case writeResolvingList
    /// LE Read PHY: its return parameters complete the request (HostEngine+PHY).
    case readPHY
    /// LE Set Data Length for the application: its Command Complete completes the request (HostEngine+LinkParameters).
    case setDataLength(UInt16)
    /// LE Connection Update for the application: accepted on Command Status, finished by LE Connection
    /// Update Complete (HostEngine+LinkParameters).
    case updateConnection(UInt16)
    case bestEffort
}

/// A run of controller commands sent strictly one after another, for one request. Procedures
/// themselves run strictly in the order they were asked for (Core Vol 4 Part E §4.4 lets a host
/// send more when the controller grants credits, but the order of e.g. scan enable and disable
/// must be kept).
struct ControllerProcedure: Hashable, Sendable {
    var id: HostRequestID?
    var kind: ProcedureKind
    var commands: [ProcedureCommand]
    var next = 0

    init(id: HostRequestID?, kind: ProcedureKind, commands: [ProcedureCommand]) {
        self.id = id
        self.kind = kind
        self.commands = commands
    }
}

extension HostEngine {
    mutating func enqueue(_ procedure: ControllerProcedure) {
        procedures.append(procedure)
        pumpProcedures()
    }

    mutating func enqueue(_ id: HostRequestID?, _ kind: ProcedureKind, _ commands: [HCICommand], optional: Bool = false) {
        enqueue(ControllerProcedure(id: id, kind: kind, commands: commands.map { ProcedureCommand(command: $0, optional: optional) }))
    }

    /// Sends the next command of the head procedure when none is outstanding; finishes procedures
    /// that have no command left.
    mutating func pumpProcedures() {
        #if !BLUEWIRE_NO_CENTRAL
        if deferredConnect != nil { startDeferredConnect() }
        #endif
        while activeCommand == nil, !procedures.isEmpty {
            let head = procedures[0]
            guard head.next < head.commands.count else {
                procedures.removeFirst()
                finish(head)
                continue
            }
            let next = head.commands[head.next]
            activeCommand = commandFlow.enqueue(next.command)
            sendCommands()
        }
        // The queue ran dry: a resolving list write waiting for an idle controller may go now.
        if procedures.isEmpty { writeResolvingListWhenIdle() }
        sendCommands()
    }

    mutating func sendCommands() {
        while let (_, command) = commandFlow.nextToSend(now: now) { write(command.packet) }
    }

    /// A Command Complete or Command Status, or a timeout, for a command the engine sent.
    mutating func commandCompleted(_ completion: CommandCompletion) {
        if !rawCommands.isEmpty, rawCommandAnswered(completion) { return }
        #if !BLUEWIRE_NO_SECURITY
        if security.cryptoCommand != nil, cryptoCommandAnswered(completion) { return }
        #endif
        guard completion.id == activeCommand, !procedures.isEmpty else { return }
        activeCommand = nil
        // Pattern match, not `==`: the derived equality compares every HCI command an advertising
        // procedure carries, and would be linked into firmware for this one test.
        if case .bringUp = procedures[0].kind {
            bringUpStep(completion.result)
            return
        }
        if case .readResolvingListSize = procedures[0].kind { resolvingListSizeAnswered(completion.result) }
        if case .readPHY = procedures[0].kind { return phyRead(procedures.removeFirst().id, completion.result) }
        let index = procedures[0].next
        let optional = procedures[0].commands[index].optional
        if case .failure(let error) = completion.result, !optional {
            let failed = procedures.removeFirst()
            fail(failed, .command(error))
            return
        }
        procedures[0].next += 1
    }

    // MARK: bring-up

    mutating func start(_ id: HostRequestID) {
        guard phase == .off || phase == .failed else {
            complete(id, .failure(.alreadyStarted))
            return
        }
        phase = .starting
        var machine = ControllerBringUp(randomAddress: configuration.randomAddress)
        #if !BLUEWIRE_NO_SECURITY
        // The controller's crypto answers in LE Meta subevents 0x08 and 0x09, which the default mask leaves out.
        if security.configuration?.crypto.usesController == true { machine.leEventMaskSent = ControllerBringUp.leEventMaskWithCrypto }
        #endif
        guard case .send(let first) = machine.start() else { return }
        bringUp = machine
        enqueue(ControllerProcedure(id: id, kind: .bringUp, commands: [ProcedureCommand(command: first, optional: false)]))
    }

    mutating func bringUpStep(_ result: Result<CommandResponse, CommandError>) {
        guard var machine = bringUp else { return }
        let step = machine.handle(result)
        bringUp = machine
        switch step {
        case .send(let command):
            procedures[0].commands = [ProcedureCommand(command: command, optional: false)]
            procedures[0].next = 0
        case .finished(let info):
            bringUp = nil
            controller = info
            fragmenter = L2CAPFragmenter(bufferSize: Int(info.leACLDataPacketLength))
            aclCredits.reset(totalBuffers: Int(info.totalNumLEACLDataPackets))
            phase = .running
            resolvingListControllerReset()
            let done = procedures.removeFirst()
            guard configuration.clearsControllerLeftoversAtStart else {
                return complete(done.id, .success(.started(info)))
            }
            // Queued in this same input, behind what the running engine queues first (LE Read Resolving
            // List Size, when there are bonds to load) and ahead of anything that waits for an idle
            // controller (the resolving list write) or for the application (its first request).
            writeResolvingListWhenIdle()
            enqueue(done.id, .clearLeftoversAtStart, leftoverCommands(info), optional: true)
        case .failed(let error):
            bringUp = nil
            phase = .failed
            let failed = procedures.removeFirst()
            complete(failed.id, .failure(.bringUp(error)))
        }
    }

    // MARK: finishing

    mutating func finish(_ procedure: ControllerProcedure) {
        switch procedure.kind {
        case .bringUp, .bestEffort, .setDataLength:
            complete(procedure.id, .success(.done))
        case .clearLeftoversAtStart:
            if let controller { complete(procedure.id, .success(.started(controller))) }
        case .updateConnection(let handle):
            connectionUpdateAccepted(procedure.id, handle: handle)
        case .startScan:
            complete(procedure.id, .success(.done))
        case .stopScan:
            scanStopped()
            complete(procedure.id, .success(.done))
        case .startAdvertising(let generation, let enables):
            advertisingConfigured(generation: generation, enables: enables)
            complete(procedure.id, .success(.done))
        case .stopAdvertising:
            complete(procedure.id, .success(.done))
        case .resumeAdvertising:
            advertisingEnableAnswered()
        case .connect:
            // The controller accepted the attempt (Command Status); Connection Complete finishes it.
            pendingConnection?.accepted = true
        case .cancelConnect:
            complete(procedure.id, .success(.done))
        case .disconnect, .encrypt:
            // Disconnection Complete / Encryption Change finishes it.
            break
        case .readResolvingListSize, .readPHY:
            break
        case .writeResolvingList:
            resolvingListWritten()
        }
    }

    mutating func fail(_ procedure: ControllerProcedure, _ error: HostEngineError) {
        switch procedure.kind {
        case .startScan:
            scanStartFailed(error)
        case .startAdvertising, .resumeAdvertising:
            advertising.enabling = false
        case .connect:
            if let pending = pendingConnection, pending.requestID == procedure.id {
                pendingConnection = nil
                // LE Create Connection refused (or cancelled by a Hardware Error, which failed the
                // peer first): the attempt failed. Accepted in Connecting; skipped once in Error.
                if state(of: pending.requested) == .disconnected(.connecting) {
                    fireExpected(.failure, peer: pending.requested, cause: error)
                }
            }
        case .disconnect(let handle):
            links[handle]?.disconnectRequests.removeAll { $0 == procedure.id }
        case .encrypt(let handle):
            links[handle]?.security.encryptRequests.removeAll { $0 == procedure.id }
            encryptionCommandFailed(handle: handle)
        case .writeResolvingList:
            resolvingListWriteFailed()
        default:
            break
        }
        complete(procedure.id, .failure(error))
    }
}
