import BluewireCore
import BluewireHCI

/// Something the link must do at a given virtual time.
enum WorldTimerKind {
    case advertisingEvent(controller: Int, handle: UInt8, generation: UInt64)
    case advertisingTimeout(controller: Int, handle: UInt8, generation: UInt64)
    case scanDurationEnded(controller: Int, generation: UInt64)
    case scanPeriodStarted(controller: Int, generation: UInt64)
    case connectionEventStep(connection: Int, generation: UInt64)
    case supervisionTimeout(connection: Int)
}

struct WorldTimer {
    var deadline: MonotonicInstant
    var sequence: UInt64
    var kind: WorldTimerKind
}

/// The whole simulated radio world: every controller on a link, their connections and their timers.
///
/// A sans-I/O state machine: packets from hosts and the passing of time go in, packets for hosts come out
/// (through each controller's outbox or sink). `VirtualLink` owns it behind a lock and wakes it from the
/// `TestClock`; nothing here blocks, reads a clock or starts a task. Iteration is always in controller
/// index and advertising-handle order, so the same inputs give the same outputs.
final class LinkWorld {
    var controllers: [ControllerState] = []
    var connections: [Int: LinkConnection] = [:]
    var nextConnectionID = 1
    var timers: [WorldTimer] = []
    var nextTimerSequence: UInt64 = 0
    var timing: VirtualLink.Timing
    var now: MonotonicInstant
    /// Supported opcode sets, per controller index.
    var supportedOpcodes: [Set<UInt16>] = []

    init(timing: VirtualLink.Timing, now: MonotonicInstant) {
        self.timing = timing
        self.now = now
    }

    func addController(_ configuration: VirtualController.Configuration) -> Int {
        let index = controllers.count
        controllers.append(ControllerState(index: index, configuration: configuration))
        supportedOpcodes.append(SupportedCommands.opcodes(for: configuration.leFeatures, crypto: configuration.controllerCrypto))
        return index
    }

    // MARK: timers

    func schedule(at deadline: MonotonicInstant, _ kind: WorldTimerKind) {
        let timer = WorldTimer(deadline: deadline, sequence: nextTimerSequence, kind: kind)
        nextTimerSequence &+= 1
        let index = timers.firstIndex { ($0.deadline, $0.sequence) > (deadline, timer.sequence) } ?? timers.endIndex
        timers.insert(timer, at: index)
    }

    var nextDeadline: MonotonicInstant? { timers.first?.deadline }

    /// Runs every timer due at `now`, in deadline order (timers added meanwhile included).
    func fireDueTimers() {
        while let first = timers.first, first.deadline <= now {
            timers.removeFirst()
            fire(first.kind)
        }
    }

    private func fire(_ kind: WorldTimerKind) {
        switch kind {
        case .advertisingEvent(let controller, let handle, let generation):
            guard controllers[controller].advertisingSets[handle]?.generation == generation else { return }
            runAdvertisingEvent(controller: controller, handle: handle)
        case .advertisingTimeout(let controller, let handle, let generation):
            guard controllers[controller].advertisingSets[handle]?.generation == generation else { return }
            advertisingTimedOut(controller: controller, handle: handle)
        case .scanDurationEnded(let controller, let generation):
            guard controllers[controller].scanGeneration == generation else { return }
            scanDurationEnded(controller: controller)
        case .scanPeriodStarted(let controller, let generation):
            guard controllers[controller].scanGeneration == generation else { return }
            scanPeriodStarted(controller: controller)
        case .connectionEventStep(let id, let generation):
            guard let connection = connections[id], connection.generation == generation else { return }
            connectionEventStep(connection)
        case .supervisionTimeout(let id):
            guard let connection = connections[id] else { return }
            close(connection, reasons: [Status.connectionTimeout, Status.connectionTimeout])
        }
    }

    // MARK: packets from a host

    func receive(_ packet: HCIPacket, from index: Int) {
        let controller = controllers[index]
        guard !controller.faults.isUnresponsive else { return }
        switch packet.type {
        case .command: receiveCommand(packet.payload, controller)
        case .acl: receiveACL(packet.payload, controller)
        default: controller.record(.unexpectedPacketType(packet.type.rawValue))
        }
    }

    private func receiveCommand(_ bytes: ArraySlice<UInt8>, _ c: ControllerState) {
        var reader = ByteReader(bytes, layer: "hci")
        guard let opcode = try? reader.readUInt16("Opcode"), let length = try? reader.readUInt8("Parameter_Total_Length")
        else {
            c.record(.malformedCommand(bytes: Array(bytes)))
            return
        }
        if c.faults.silentOpcodes.contains(opcode) { return }
        guard reader.remainingCount == Int(length) else {
            c.record(.malformedCommand(bytes: Array(bytes)))
            reject(opcode, c, Status.invalidParameters)
            return
        }
        guard supportedOpcodes[c.index].contains(opcode) else {
            switch c.configuration.unknownCommandResponse {
            case .commandComplete: c.commandComplete(opcode, [Status.unknownCommand])
            case .commandStatus: c.commandStatus(opcode, Status.unknownCommand)
            case .silence: break
            }
            return
        }
        if Op.legacyAdvertisingCommands.contains(opcode) {
            guard c.commandFamily != .extended else { return reject(opcode, c, Status.commandDisallowed) }
            c.commandFamily = .legacy
        } else if Op.extendedAdvertisingCommands.contains(opcode) {
            guard c.commandFamily != .legacy else { return reject(opcode, c, Status.commandDisallowed) }
            c.commandFamily = .extended
        }
        do {
            try dispatch(opcode, c, &reader)
        } catch {
            reject(opcode, c, Status.invalidParameters)
        }
    }

    /// Answers a command with an error status, in the kind of event that command is answered with.
    func reject(_ opcode: UInt16, _ c: ControllerState, _ status: UInt8) {
        if Op.answeredWithStatus.contains(opcode) {
            c.commandStatus(opcode, status)
        } else {
            c.commandComplete(opcode, [status])
        }
    }

    private func dispatch(_ opcode: UInt16, _ c: ControllerState, _ r: inout ByteReader) throws(DecodeError) {
        switch opcode {
        case Op.reset: try reset(c, &r)
        case Op.setEventMask, Op.leSetEventMask: try setEventMask(opcode, c, &r)
        case Op.readLocalVersionInformation, Op.readLocalSupportedCommands, Op.readLocalSupportedFeatures,
            Op.readBufferSize, Op.readBDADDR, Op.leReadBufferSize, Op.leReadBufferSizeV2,
            Op.leReadLocalSupportedFeatures, Op.leReadSupportedStates, Op.leRand,
            Op.leReadAdvertisingPhysicalChannelTxPower, Op.leReadFilterAcceptListSize,
            Op.leReadMaximumDataLength, Op.leReadSuggestedDefaultDataLength,
            Op.leReadMaximumAdvertisingDataLength, Op.leReadNumberOfSupportedAdvertisingSets:
            try readInformation(opcode, c, &r)
        case Op.leSetRandomAddress: try setRandomAddress(c, &r)
        case Op.leClearFilterAcceptList, Op.leAddDeviceToFilterAcceptList, Op.leRemoveDeviceFromFilterAcceptList:
            try editFilterAcceptList(opcode, c, &r)
        case Op.leAddDeviceToResolvingList, Op.leClearResolvingList: try editResolvingList(opcode, c, &r)
        case Op.leReadResolvingListSize: try readResolvingListSize(c, &r)
        case Op.leSetAddressResolutionEnable: try setAddressResolutionEnable(c, &r)
        case Op.leSetAdvertisingParameters: try setAdvertisingParameters(c, &r)
        case Op.leSetAdvertisingData, Op.leSetScanResponseData: try setLegacyAdvertisingData(opcode, c, &r)
        case Op.leSetAdvertisingEnable: try setAdvertisingEnable(c, &r)
        case Op.leSetAdvertisingSetRandomAddress: try setAdvertisingSetRandomAddress(c, &r)
        case Op.leSetExtendedAdvertisingParameters: try setExtendedAdvertisingParameters(c, &r)
        case Op.leSetExtendedAdvertisingData, Op.leSetExtendedScanResponseData:
            try setExtendedAdvertisingData(opcode, c, &r)
        case Op.leSetExtendedAdvertisingEnable: try setExtendedAdvertisingEnable(c, &r)
        case Op.leRemoveAdvertisingSet, Op.leClearAdvertisingSets: try removeAdvertisingSets(opcode, c, &r)
        case Op.leSetScanParameters: try setScanParameters(c, &r)
        case Op.leSetScanEnable: try setScanEnable(c, &r)
        case Op.leSetExtendedScanParameters: try setExtendedScanParameters(c, &r)
        case Op.leSetExtendedScanEnable: try setExtendedScanEnable(c, &r)
        case Op.leCreateConnection: try createConnection(c, &r)
        case Op.leExtendedCreateConnection: try extendedCreateConnection(c, &r)
        case Op.leCreateConnectionCancel: try createConnectionCancel(c, &r)
        case Op.disconnect: try disconnect(c, &r)
        case Op.leConnectionUpdate: try connectionUpdate(c, &r)
        case Op.leSetDataLength: try setDataLength(c, &r)
        case Op.leWriteSuggestedDefaultDataLength: try writeSuggestedDefaultDataLength(c, &r)
        case Op.leReadPHY: try readPHY(c, &r)
        case Op.leSetDefaultPHY: try setDefaultPHY(c, &r)
        case Op.leSetPHY: try setPHY(c, &r)
        case Op.readRemoteVersionInformation, Op.leReadRemoteFeatures: try readRemoteInformation(opcode, c, &r)
        case Op.readRSSI: try readRSSI(c, &r)
        case Op.leEnableEncryption: try enableEncryption(c, &r)
        case Op.leEncrypt: try encrypt(c, &r)
        case Op.leReadLocalP256PublicKey: try readLocalP256PublicKey(c, &r)
        case Op.leGenerateDHKey: try generateDHKey(c, &r)
        case Op.leLongTermKeyRequestReply, Op.leLongTermKeyRequestNegativeReply: try longTermKeyReply(opcode, c, &r)
        default: c.commandComplete(opcode, [Status.unknownCommand])
        }
    }

    // MARK: helpers shared by the command files

    /// The connection and side for a handle of controller `c`.
    func connection(_ handle: UInt16, of c: ControllerState) -> (LinkConnection, Int)? {
        guard let id = c.connections[handle & 0x0FFF], let connection = connections[id], !connection.isClosed,
            let side = connection.side(of: c.index)
        else { return nil }
        return (connection, side)
    }

    /// Runs a control procedure now (no radio timing) or queues it for the next connection event.
    func start(_ procedure: ControlProcedure, on connection: LinkConnection) {
        if timing.modelsRadio {
            connection.procedures.append(procedure)
            scheduleConnectionEventIfNeeded(connection)
        } else if !connection.isLost {
            complete(procedure, on: connection)
        }
    }
}

/// Little-endian byte helpers for event parameters.
extension Array where Element == UInt8 {
    mutating func appendLE(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func appendLE24(_ value: UInt32) {
        for shift in [0, 8, 16] as [UInt32] { append(UInt8(truncatingIfNeeded: value >> shift)) }
    }

    mutating func appendAddress(_ address: BluetoothAddress) {
        append(contentsOf: address.littleEndianBytes)
    }
}
