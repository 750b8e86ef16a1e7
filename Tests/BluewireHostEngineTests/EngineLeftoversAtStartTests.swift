import BluewireCore
import BluewireCrypto
import BluewireHCI
import BluewireHostEngine
import BluewireSMP
import HostTestSupport
import Testing

/// `clearsControllerLeftoversAtStart`: bring-up ends with scan disable, advertising disable and LE
/// Create Connection Cancel, and `start` completes only once they are answered. With bonds to load,
/// LE Read Resolving List Size goes first (queued as bring-up finishes) and the resolving list write
/// follows the leftovers, begun in the same input that completes `start`: an application's first
/// request, which can only come after that completion, always queues behind it. So the commands' order
/// no longer depends on whether the controller answers the size before the application asks for
/// something: a session recorded with `bluewire gatt --keys` replays from its capture every time
/// (the separate `.clearControllerLeftovers` request, sent after `start`, raced that answer).
@Suite("Host engine: clearing the controller's leftovers as the end of bring-up")
struct EngineLeftoversAtStartTests {
    static let peer = BluetoothAddress(value: 0xD7_CE_C7_E0_B9_49, type: .random)
    static let irk: [UInt8] = (0..<16).map { UInt8(0xA0 + $0) }

    static func driver(bonded: Bool) -> EngineDriver {
        var configuration = HostEngineConfiguration(randomAddress: BluetoothAddress(value: 0xC4_5A_17_00_B1_0E, type: .random))
        configuration.clearsControllerLeftoversAtStart = true
        var driver = EngineDriver(configuration: configuration)
        driver.engine.configureSecurity(HostSecurityConfiguration(
            pairing: PairingConfiguration(ioCapability: .noInputNoOutput), crypto: SMPCrypto(SwiftCryptoSMP())))
        if bonded {
            var peerKeys = DistributedKeys()
            peerKeys.identityResolvingKey = irk
            peerKeys.identityAddress = peer.smpForm
            driver.engine.addBond(HostBond(
                peer: peer, secureConnections: true, authenticated: false, keySize: 16,
                longTermKey: [UInt8](repeating: 0x11, count: 16), localKeys: DistributedKeys(), peerKeys: peerKeys))
        }
        driver.drain()
        return driver
    }

    /// Answers the engine's commands one at a time, as bumble does, until `start` completes; returns
    /// the opcodes answered, and the commands already written (unanswered) when it completed.
    static func answerUntilStarted(_ driver: inout EngineDriver, _ start: HostRequestID) throws -> (answered: [HCIOpcode], pending: [HCIOpcode]) {
        var answered: [HCIOpcode] = []
        while driver.result(start) == nil {
            let commands = driver.takeWritten()
            try #require(commands.count == 1, "one command at a time: \(commands.map { Array($0.payload) })")
            let opcode = try #require(ControllerBytes.opcode(commands[0]))
            answered.append(opcode)
            // bumble's controller: a resolving list of 8 entries.
            driver.controller(opcode == .leReadResolvingListSize
                ? ControllerBytes.commandComplete(opcode, returning: [8])
                : try #require(ControllerBytes.answer(commands[0])))
        }
        return (answered, driver.takeWritten().compactMap(ControllerBytes.opcode))
    }

    @Test("with a bond: Read Resolving List Size, the three leftovers, then start completes as LE Clear Resolving List goes out")
    func bondedOrder() throws {
        var driver = Self.driver(bonded: true)
        let start = try driver.startFromBumbleCapture()
        #expect(driver.result(start) == nil, "start waits for the leftovers")
        let (answered, pending) = try Self.answerUntilStarted(&driver, start)
        #expect(answered == [.leReadResolvingListSize, .leSetScanEnable, .leSetAdvertisingEnable, .leCreateConnectionCancel])
        guard case .success(.started(let info))? = driver.result(start) else {
            Issue.record("start: \(String(describing: driver.result(start)))")
            return
        }
        #expect(info.supportsResolvingList)
        // The write began in the input that completed start, so the first request queues behind it.
        #expect(pending == [.leClearResolvingList])
        let connect = driver.perform(.connect(Self.peer, LEConnectionParameters()))
        #expect(driver.takeWritten().isEmpty, "the connect waits for the resolving list write")
        driver.controller(ControllerBytes.commandComplete(.leClearResolvingList))
        var rest: [HCIOpcode] = []
        while let command = driver.takeWritten().first, let opcode = ControllerBytes.opcode(command) {
            rest.append(opcode)
            if opcode == .leCreateConnection { break }
            driver.controller(try #require(ControllerBytes.answer(command)))
        }
        #expect(rest == [.leAddDeviceToResolvingList, .leSetAddressResolutionEnable, .leSetDefaultPHY, .leCreateConnection])
        #expect(driver.result(connect) == nil)
    }

    @Test("a leftover command the controller refuses (Command Disallowed, nothing to cancel) does not fail start")
    func refusedLeftoverIsFine() throws {
        var driver = Self.driver(bonded: false)
        let start = try driver.startFromBumbleCapture()
        // Without a bond no resolving list command is sent: the leftovers come straight after bring-up.
        var answered: [HCIOpcode] = []
        while driver.result(start) == nil {
            let command = try #require(driver.takeWritten().first, "the engine stopped before start completed")
            let opcode = try #require(ControllerBytes.opcode(command))
            answered.append(opcode)
            driver.controller(ControllerBytes.commandComplete(opcode, status: opcode == .leCreateConnectionCancel ? 0x0C : 0x00))
        }
        #expect(answered == [.leSetScanEnable, .leSetAdvertisingEnable, .leCreateConnectionCancel])
        guard case .success(.started)? = driver.result(start) else {
            Issue.record("start: \(String(describing: driver.result(start)))")
            return
        }
        #expect(driver.takeWritten().isEmpty, "nothing else without a bond")
    }

    @Test("a leftover command left unanswered times out on its own deadline; start still completes")
    func unansweredLeftoverTimesOut() throws {
        var driver = Self.driver(bonded: false)
        let start = try driver.startFromBumbleCapture()
        let first = try #require(driver.takeWritten().first)
        #expect(ControllerBytes.opcode(first) == .leSetScanEnable)
        driver.advance(by: .seconds(2))
        #expect(driver.result(start) == nil)
        _ = try Self.answerUntilStarted(&driver, start)
        guard case .success(.started)? = driver.result(start) else {
            Issue.record("start: \(String(describing: driver.result(start)))")
            return
        }
    }
}
