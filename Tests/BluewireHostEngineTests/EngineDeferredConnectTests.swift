import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import Testing

/// A `.connect` made while a cancelled attempt still waits for the controller's LE Connection
/// Complete (Core Vol 4 Part E §7.8.13) waits for that report rather than being refused, and the
/// report is never taken for the new attempt.
@Suite("Engine: a connect after a cancel waits for the cancelled attempt's end")
struct EngineDeferredConnectTests {
    static let peripheral = CentralEngineTests.peripheral
    static let other = BluetoothAddress(value: 0xC0_11_22_33_44_55, type: .random)
    static let link: UInt16 = 0x0001

    @Test("connect, cancel, connect again at once: the second starts after the first's Connection Complete and gets its own link")
    func secondConnectWaitsForTheCancelledAttempt() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        let first = driver.perform(.connect(Self.peripheral, LEConnectionParameters()))
        driver.perform(.cancelConnect)
        let second = driver.perform(.connect(Self.other, LEConnectionParameters()))
        #expect(driver.result(first) == .failure(.cancelled))
        #expect(driver.result(second) == nil, "waiting, not refused")
        let opcodes = driver.answerCommands()
        #expect(opcodes.filter { $0 == .leCreateConnection }.count == 1, "the second Create Connection waits")
        #expect(driver.engine.state(of: Self.other) == .initial, "the waiting attempt has not begun")
        // The controller's answer to the cancel: the first attempt ends; now the second begins.
        driver.controller(ControllerBytes.leConnectionComplete(handle: 0, central: true, peer: Self.peripheral, status: 0x02))
        #expect(driver.result(second) == nil)
        #expect(driver.answerCommands().contains(.leCreateConnection))
        #expect(driver.engine.state(of: Self.other) == .disconnected(.connecting))
        driver.controller(ControllerBytes.leConnectionComplete(handle: Self.link, central: true, peer: Self.other))
        let link = HostConnection(handle: Self.link, peer: Self.other, role: .central, interval: 0x0018)
        #expect(driver.result(second) == .success(.connected(link)))
    }

    @Test("a waiting connect is cancelled without anything sent for it; a third connect while one waits is refused")
    func waitingConnectIsCancellable() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        driver.perform(.connect(Self.peripheral, LEConnectionParameters()))
        driver.perform(.cancelConnect)
        let second = driver.perform(.connect(Self.other, LEConnectionParameters()))
        let third = driver.perform(.connect(Self.other, LEConnectionParameters()))
        #expect(driver.result(third) == .failure(.connectionAttemptInProgress))
        let cancel = driver.perform(.cancelConnect)
        #expect(driver.result(second) == .failure(.cancelled))
        #expect(driver.result(cancel) == .success(.done))
        driver.answerCommands()
        driver.controller(ControllerBytes.leConnectionComplete(handle: 0, central: true, peer: Self.peripheral, status: 0x02))
        #expect(!driver.answerCommands().contains(.leCreateConnection), "the withdrawn attempt never starts")
        #expect(driver.engine.state(of: Self.other) == .initial)
    }
}

extension EngineDeferredConnectTests {
    @Test("a waiting connect whose controller never ends the cancelled attempt fails at its own deadline")
    func waitingConnectTimesOut() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        driver.perform(.connect(Self.peripheral, LEConnectionParameters()))
        driver.perform(.cancelConnect)
        let second = driver.perform(.connect(Self.other, LEConnectionParameters(), timeout: .milliseconds(20)))
        driver.answerCommands()
        driver.advance(by: .milliseconds(19))
        #expect(driver.result(second) == nil)
        #expect(driver.engine.nextDeadline == driver.now + .milliseconds(1), "the timer wakes for it")
        driver.advance(by: .milliseconds(1))
        #expect(driver.result(second) == .failure(.connectionTimeout))
        #expect(driver.engine.state(of: Self.other) == .initial, "it never began")
    }
}

/// A controller that never reports the end of a cancelled attempt (bumble's unpatched controller;
/// Core Vol 4 Part E §7.8.13 obliges it to): the scripted controller here answers LE Create
/// Connection Cancel with Command Complete and then says nothing, which the virtual controller and
/// the patched bumble link never do (a fault only a script produces).
extension EngineDeferredConnectTests {
    /// Bring-up, then a connect to `peripheral` that times out after 100 ms and whose cancel the
    /// controller answers without ever ending the attempt.
    static func timedOutAttempt() throws -> EngineDriver {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        let first = driver.perform(.connect(Self.peripheral, LEConnectionParameters(), timeout: .milliseconds(100)))
        driver.answerCommands()
        driver.advance(by: .milliseconds(100))
        #expect(driver.result(first) == .failure(.connectionTimeout))
        #expect(driver.answerCommands().contains(.leCreateConnectionCancel))
        return driver
    }

    @Test("the cancelled attempt's end never comes: after a bounded wait the engine reports the controller's fault and the next connect goes out")
    func overdueCancelledAttemptIsGivenUp() throws {
        var driver = try Self.timedOutAttempt()
        _ = driver.takeEvents()
        let second = driver.perform(.connect(Self.other, LEConnectionParameters(), timeout: .seconds(10)))
        #expect(driver.result(second) == nil, "waits for the cancelled attempt's end first")
        #expect(!driver.answerCommands().contains(.leCreateConnection))
        driver.advance(by: .milliseconds(1_999))
        #expect(!driver.answerCommands().contains(.leCreateConnection), "still within the wait")
        driver.advance(by: .milliseconds(1))
        let events = driver.takeEvents()
        #expect(events.contains(.controllerFault(.cancelledConnectionAttemptNeverEnded(peer: Self.peripheral))), "\(events)")
        #expect(driver.answerCommands().contains(.leCreateConnection), "the waiting connect went out")
        #expect(driver.engine.state(of: Self.other) == .disconnected(.connecting))
        driver.controller(ControllerBytes.leConnectionComplete(handle: Self.link, central: true, peer: Self.other))
        let link = HostConnection(handle: Self.link, peer: Self.other, role: .central, interval: 0x0018)
        #expect(driver.result(second) == .success(.connected(link)))
    }

    @Test("a connect made after the engine stopped waiting goes out at once; the late end of the old attempt is not taken for it")
    func lateEndOfTheOldAttemptIsIgnored() throws {
        var driver = try Self.timedOutAttempt()
        driver.advance(by: .seconds(2))
        let next = driver.perform(.connect(Self.other, LEConnectionParameters()))
        #expect(driver.answerCommands().contains(.leCreateConnection))
        // The old attempt's end, very late: it names the other peer, so it is not this attempt's.
        driver.controller(ControllerBytes.leConnectionComplete(handle: 0, central: true, peer: Self.peripheral, status: 0x02))
        #expect(driver.result(next) == nil)
        driver.controller(ControllerBytes.leConnectionComplete(handle: Self.link, central: true, peer: Self.other))
        let link = HostConnection(handle: Self.link, peer: Self.other, role: .central, interval: 0x0018)
        #expect(driver.result(next) == .success(.connected(link)))
    }

    @Test("a connect to the peer a timed-out attempt left in Error is refused at once, not deferred")
    func connectToAPeerInErrorIsRefusedAtOnce() throws {
        var driver = try Self.timedOutAttempt()
        #expect(driver.engine.state(of: Self.peripheral) == .error)
        let again = driver.perform(.connect(Self.peripheral, LEConnectionParameters()))
        #expect(driver.result(again) == .failure(.refused(state: .error, trigger: .connect)))
    }
}
