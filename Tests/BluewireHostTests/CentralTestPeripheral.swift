import Bluewire
import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTransport
import Synchronization

/// A controller with a peripheral behind it, in one object: an `HCITransport` the Host drives that
/// answers bring-up, connects on LE Create Connection, and hands every ATT PDU the Host sends to an
/// in-process `GATTServer` (the peer), sending its answers back as ACL data.
///
/// It is scripted the way the tests need: the peer can disconnect instead of answering the n-th PDU of
/// an opcode (mid-procedure), stay silent, push notifications and indications, and it records every
/// command and ATT PDU. LE Set Data Length is answered like bumble does, with a bare status 0x01.
final class CentralTestPeripheral: HCITransport {
    static let handle: UInt16 = 0x0040
    static let peerAddress = BluetoothAddress(0xC0, 0x11, 0x22, 0x33, 0x44, 0x55, type: .random)

    /// What the peer does with the n-th (1-based) ATT PDU of an opcode instead of answering it.
    enum Fault: Sendable {
        case disconnect(reason: HCIStatus)
        case silence
    }

    struct State {
        var server: GATTServer
        var connected = false
        var aclBuffer: [UInt8] = []
        var faults: [UInt8: (occurrence: Int, fault: Fault)] = [:]
        var opcodeCounts: [UInt8: Int] = [:]
        var attPDUs: [[UInt8]] = []
        var signalingPDUs: [[UInt8]] = []
        var commands: [UInt16] = []
        var answerCreateConnection = true
        /// The status LE Connection Complete reports (0x00: the connection is made).
        var createConnectionStatus: UInt8 = 0x00
        var closed = false
        /// After a CCCD write enabling notifications on the key (a CCCD handle): notify this many
        /// counter values on the value handle, in the same burst as the Write Response.
        var burstOnSubscribe: [UInt16: (valueHandle: UInt16, count: Int)] = [:]
        /// Tasks in `waitForCommand`, resumed when the Host sends their opcode.
        var commandWaiters: [(opcode: UInt16, continuation: CheckedContinuation<Void, Never>)] = []
    }

    let inbound: HCIInboundPackets
    private let continuation: HCIInboundPackets.Continuation
    private let state: Mutex<State>
    /// The opcode of each PDU a fault was applied to, as it happens.
    let faultsApplied: AsyncStream<ATTOpcode>
    private let faultContinuation: AsyncStream<ATTOpcode>.Continuation

    init(database: GATTDatabase) {
        (inbound, continuation) = HCIInboundPackets.makeStream()
        (faultsApplied, faultContinuation) = AsyncStream<ATTOpcode>.makeStream()
        state = Mutex(State(server: GATTServer(database: database)))
    }

    // MARK: Scripting

    /// Instead of answering the `occurrence`-th PDU with `opcode`, do `fault`.
    func inject(_ fault: Fault, onPDU opcode: ATTOpcode, occurrence: Int = 1) {
        state.withLock { $0.faults[opcode.rawValue] = (occurrence, fault) }
    }

    func neverConnect() { state.withLock { $0.answerCreateConnection = false } }

    /// Answers LE Create Connection with an LE Connection Complete carrying `status` (e.g. Connection
    /// Failed to be Established, 0x3E, which a controller reports when the radio link never came up:
    /// neither bumble's controller nor the virtual one can be made to fail so on demand).
    func failConnections(status: HCIStatus) { state.withLock { $0.createConnectionStatus = status.rawValue } }

    func burst(count: Int, on valueHandle: UInt16, whenSubscribedAt descriptorHandle: UInt16) {
        state.withLock { $0.burstOnSubscribe[descriptorHandle] = (valueHandle, count) }
    }

    /// The ATT PDUs the Host sent, in order.
    var receivedPDUs: [[UInt8]] { state.withLock { $0.attPDUs } }
    /// The LE signaling PDUs (CID 0x0005) the Host sent, in order.
    var receivedSignaling: [[UInt8]] { state.withLock { $0.signalingPDUs } }
    /// The HCI command opcodes the Host sent, in order.
    var receivedCommands: [UInt16] { state.withLock { $0.commands } }

    /// Returns once the Host has sent a command with `opcode` (at once if it already has): the
    /// controller sees it in `send`, which resumes the waiter, so a test awaits the command itself.
    func waitForCommand(_ opcode: UInt16) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let seen = state.withLock { state in
                if state.commands.contains(opcode) { return true }
                state.commandWaiters.append((opcode, continuation))
                return false
            }
            if seen { continuation.resume() }
        }
    }
    var server: GATTServer { state.withLock { $0.server } }

    /// Sends a Handle Value Indication or Notification from the peer's server.
    func send(att pdu: ATTPDU) {
        sendACL(pdu.encode())
    }

    /// Sends an LE signaling command from the peer (CID 0x0005).
    func send(signaling bytes: [UInt8]) {
        sendACL(bytes, channel: 0x0005)
    }

    /// The peer ends the link with `reason`.
    func disconnect(reason: HCIStatus) {
        let wasConnected = state.withLock { state in
            defer { state.connected = false }
            return state.connected
        }
        if wasConnected { event(0x05, [0x00, lo(Self.handle), hi(Self.handle), reason.rawValue]) }
    }

    // MARK: HCITransport

    func send(_ packet: HCIPacket) async throws(TransportError) {
        if state.withLock({ $0.closed }) { throw .closed }
        switch packet.type {
        case .command: command(Array(packet.payload))
        case .acl: acl(Array(packet.payload))
        default: break
        }
    }

    func close() async {
        let first = state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        if first { continuation.finish() }
    }

    // MARK: Controller

    private func command(_ bytes: [UInt8]) {
        guard bytes.count >= 3 else { return }
        let opcode = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
        let waiters = state.withLock { state in
            state.commands.append(opcode)
            let ready = state.commandWaiters.filter { $0.opcode == opcode }.map(\.continuation)
            state.commandWaiters.removeAll { $0.opcode == opcode }
            return ready
        }
        for waiter in waiters { waiter.resume() }
        switch opcode {
        case 0x1001: complete(opcode, [0x00, 0x09, 0x00, 0x00, 0x09, 0xFF, 0xFF, 0x00, 0x00])
        case 0x1002:
            var commands = [UInt8](repeating: 0, count: 64)
            commands[33] |= 1 << 6  // LE Set Data Length
            commands[35] |= 1 << 5  // LE Set Default PHY
            complete(opcode, [0x00] + commands)
        case 0x1003: complete(opcode, [0x00] + [UInt8](repeating: 0, count: 8))
        case 0x1009: complete(opcode, [0x00, 1, 2, 3, 4, 5, 6])
        case 0x2003: complete(opcode, [0x00, 0x20, 0x01, 0, 0, 0, 0, 0, 0])  // DLE, 2M PHY
        case 0x2002: complete(opcode, [0x00, 27, 0, 8])
        case 0x0C03, 0x0C01, 0x2001, 0x2005, 0x2031: complete(opcode, [0x00])
        case 0x2022: complete(opcode, [0x01])  // LE Set Data Length: bare Unknown HCI Command, like bumble
        case 0x200D:
            status(opcode, 0x00)
            let (answer, failure) = state.withLock { ($0.answerCreateConnection, $0.createConnectionStatus) }
            if answer, failure != 0x00 {
                var parameters: [UInt8] = [0x01, failure, 0x00, 0x00, 0x00, 0x01] + Self.peerAddress.littleEndianBytes
                parameters += [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
                event(0x3E, parameters)
            } else if answer {
                connectionComplete(status: 0x00)
            }
        case 0x200E:
            complete(opcode, [0x00])
        case 0x2013:
            status(opcode, 0x00)
            let p = Array(bytes[3...])
            // LE Connection Update Complete with the maximum interval asked for, as bumble answers.
            event(0x3E, [0x03, 0x00, lo(Self.handle), hi(Self.handle), p[4], p[5], p[6], p[7], p[8], p[9]])
        case 0x0406:
            status(opcode, 0x00)
            // Core Vol 4 Part E §7.7.5: the local side reports Connection Terminated by Local Host.
            disconnect(reason: .connectionTerminatedByLocalHost)
        default:
            complete(opcode, [0x01])
        }
    }

    private func connectionComplete(status: UInt8) {
        state.withLock { state in
            state.connected = true
            state.server.connect(Self.handle)
        }
        var parameters: [UInt8] = [0x01, status, lo(Self.handle), hi(Self.handle), 0x00, 0x01]
        parameters += Self.peerAddress.littleEndianBytes
        parameters += [0x28, 0x00, 0x00, 0x00, 0xF4, 0x01, 0x00]
        event(0x3E, parameters)
    }

    private func acl(_ bytes: [UInt8]) {
        guard bytes.count >= 4 else { return }
        let boundary = (bytes[1] >> 4) & 0x3
        // Completed at once, as bumble does.
        event(0x13, [0x01, lo(Self.handle), hi(Self.handle), 0x01, 0x00])
        let pdu: [UInt8]? = state.withLock { state in
            if boundary != 0x01 { state.aclBuffer = [] }
            state.aclBuffer += bytes[4...]
            let buffer = state.aclBuffer
            guard buffer.count >= 4 else { return nil }
            let length = Int(buffer[0]) | Int(buffer[1]) << 8
            guard buffer.count >= 4 + length else { return nil }
            state.aclBuffer = []
            let payload = Array(buffer[4..<(4 + length)])
            if buffer[2] == 0x05, buffer[3] == 0x00 { state.signalingPDUs.append(payload) }
            guard buffer[2] == 0x04, buffer[3] == 0x00 else { return nil }
            return payload
        }
        if let pdu { attReceived(pdu) }
    }

    private func attReceived(_ pdu: [UInt8]) {
        guard let opcode = pdu.first else { return }
        enum Action { case answer([UInt8]?, burst: [[UInt8]]), fault(Fault) }
        let action: Action = state.withLock { state in
            state.attPDUs.append(pdu)
            guard state.connected else { return .answer(nil, burst: []) }
            state.opcodeCounts[opcode, default: 0] += 1
            if let (occurrence, fault) = state.faults[opcode], occurrence == state.opcodeCounts[opcode] {
                return .fault(fault)
            }
            let answer = state.server.handle(pdu, from: Self.handle)
            var burst: [[UInt8]] = []
            if opcode == ATTOpcode.writeRequest.rawValue, pdu.count == 5, pdu[3] & 0x01 != 0 {
                let descriptor = UInt16(pdu[1]) | UInt16(pdu[2]) << 8
                if let (valueHandle, count) = state.burstOnSubscribe[descriptor] {
                    for sequence in 0..<count {
                        let value = [UInt8(truncatingIfNeeded: sequence), UInt8(truncatingIfNeeded: sequence >> 8)]
                        burst.append(ATTPDU.handleValueNotification(handle: valueHandle, value: value[...]).encode())
                    }
                }
            }
            return .answer(answer, burst: burst)
        }
        switch action {
        case .answer(let answer, let burst):
            if let answer { sendACL(answer) }
            for notification in burst { sendACL(notification) }
        case .fault(.disconnect(let reason)):
            disconnect(reason: reason)
            faultContinuation.yield(ATTOpcode(opcode))
        case .fault(.silence):
            faultContinuation.yield(ATTOpcode(opcode))
        }
    }

    // MARK: Encoding

    private func sendACL(_ att: [UInt8], channel: UInt16 = 0x0004) {
        // One L2CAP PDU per ACL packet, even beyond the advertised 27 octets (bumble does that too).
        let l2cap = [lo(UInt16(att.count)), hi(UInt16(att.count)), lo(channel), hi(channel)] + att
        let header = [lo(Self.handle), hi(Self.handle) | 0x20, lo(UInt16(l2cap.count)), hi(UInt16(l2cap.count))]
        continuation.yield(HCIPacket(type: .acl, payload: header + l2cap))
    }

    private func complete(_ opcode: UInt16, _ parameters: [UInt8]) {
        event(0x0E, [0x01, lo(opcode), hi(opcode)] + parameters)
    }

    private func status(_ opcode: UInt16, _ status: UInt8) {
        event(0x0F, [status, 0x01, lo(opcode), hi(opcode)])
    }

    private func event(_ code: UInt8, _ parameters: [UInt8]) {
        continuation.yield(HCIPacket(type: .event, payload: [code, UInt8(parameters.count)] + parameters))
    }
}

func lo(_ value: UInt16) -> UInt8 { UInt8(truncatingIfNeeded: value) }
func hi(_ value: UInt16) -> UInt8 { UInt8(truncatingIfNeeded: value >> 8) }

/// A peripheral database for the central tests, and the handles the builder gave it.
struct CentralTestDatabase {
    let database: GATTDatabase
    let deviceName: GATTCharacteristicHandles
    let serviceChanged: GATTCharacteristicHandles
    let counter: GATTCharacteristicHandles
    let long: GATTCharacteristicHandles
    let control: GATTCharacteristicHandles
    let longValue: [UInt8]

    init() throws {
        var builder = GATTDatabaseBuilder()
        longValue = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try builder.addService(.genericAccess)
        deviceName = try builder.addCharacteristic(.deviceName, properties: [.read], permissions: [.read], value: .cached(Array("Central test".utf8)))
        try builder.addService(.genericAttribute)
        serviceChanged = try builder.addCharacteristic(.serviceChanged, properties: [.indicate], permissions: [], value: .cached([]))
        try builder.addService(BluetoothUUID(0xFFE0))
        counter = try builder.addCharacteristic(
            BluetoothUUID(0xFFE1), properties: [.read, .notify, .indicate], permissions: [.read], value: .cached([0]))
        long = try builder.addCharacteristic(BluetoothUUID(0xFFE2), properties: [.read, .write], permissions: [.read, .write], value: .cached(longValue))
        control = try builder.addCharacteristic(
            BluetoothUUID(0xFFE3), properties: [.read, .write, .writeWithoutResponse], permissions: [.read, .write], value: .cached([0]))
        database = builder.build()
    }
}

/// A started Host wired to a `CentralTestPeripheral`, connected, with the link's GATT client.
struct CentralTestBench {
    let peripheral: CentralTestPeripheral
    let host: BluetoothHost
    let connection: Connection
    let gatt: GATTClient
    let fixture: CentralTestDatabase

    static func make() async throws -> CentralTestBench {
        let fixture = try CentralTestDatabase()
        let peripheral = CentralTestPeripheral(database: fixture.database)
        let host = BluetoothHost(transport: peripheral)
        try await host.start()
        let connection = try await host.connect(to: CentralTestPeripheral.peerAddress)
        return CentralTestBench(peripheral: peripheral, host: host, connection: connection, gatt: await connection.gatt, fixture: fixture)
    }
}
