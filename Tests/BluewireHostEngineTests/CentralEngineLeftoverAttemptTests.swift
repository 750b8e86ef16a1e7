import BluewireCore
import BluewireHCI
import BluewireHostEngine
import Testing

/// A killed program's LE Create Connection, cancelled by `.clearControllerLeftovers`, ends with a
/// failed LE Connection Complete (Unknown Connection Identifier, Core Vol 4 Part E §7.8.13) that
/// bumble's controller sends right after the Cancel's Command Complete: it must not end the attempt
/// the engine queued behind the cancel.
@Suite("Host engine: a leftover connection attempt's failure")
struct CentralEngineLeftoverAttemptTests {
    static let peripheral = BluetoothAddress(value: 0xC0_AA_BB_CC_DD_E1, type: .random)

    @Test("a failed LE Connection Complete before our LE Create Connection was accepted is ignored; after it, it ends the attempt")
    func failureBeforeAcceptanceIsAnOlderAttempts() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        let clear = driver.perform(.clearControllerLeftovers)
        let connect = driver.perform(.connect(Self.peripheral, LEConnectionParameters()))
        // Answer every command up to (not including) our LE Create Connection.
        var create: HCIPacket?
        while create == nil {
            let commands = driver.takeWritten().filter { $0.type == .command }
            try #require(!commands.isEmpty, "the engine stopped before LE Create Connection")
            for command in commands {
                if ControllerBytes.opcode(command) == .leCreateConnection || ControllerBytes.opcode(command) == .leExtendedCreateConnection {
                    create = command
                } else if let answer = ControllerBytes.answer(command) {
                    driver.controller(answer)
                }
            }
        }
        #expect(driver.result(clear) == .success(.done))
        // The cancelled older attempt's end arrives now.
        driver.controller(ControllerBytes.leConnectionComplete(handle: 0, central: true, peer: Self.peripheral, status: 0x02))
        #expect(driver.result(connect) == nil, "the older attempt's failure is not ours")
        // Ours is accepted (Command Status), then fails: that one ends it.
        let accepted = try #require(create.flatMap(ControllerBytes.answer))
        driver.controller(accepted)
        #expect(driver.result(connect) == nil)
        driver.controller(ControllerBytes.leConnectionComplete(handle: 0, central: true, peer: Self.peripheral, status: 0x3E))
        #expect(driver.result(connect) == .failure(.connectionFailed(.connectionFailedToBeEstablished)))
    }
}
