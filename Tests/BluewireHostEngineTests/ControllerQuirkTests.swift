import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import HostTestSupport
import Testing

/// Controller behaviours the engine must live with (bumble's among them).
@Suite("Host engine: controller quirks")
struct ControllerQuirkTests {
    static let central = BluetoothAddress(value: 0xF0_11_22_33_44_55, type: .random)
    static let link: UInt16 = 0x0040

    /// bumble's controller never answers a command it does not know. Read BD_ADDR is optional in
    /// bring-up: its timeout must move bring-up on to the next command, not end it. (The silence is
    /// produced by withholding the capture's answer: a real bumble answers this one.)
    @Test("an unanswered optional bring-up command times out and bring-up goes on")
    func unansweredBringUpCommand() throws {
        var driver = EngineDriver()
        let packets = try Captures.packets("bumble_host_bringup.btsnoop")
        let start = driver.perform(.start)
        var withheld = false
        for (direction, packet) in packets {
            switch direction {
            case .hostToController:
                #expect(driver.takeWritten() == [packet])
            case .controllerToHost:
                if !withheld, Array(packet.payload.prefix(5)) == [0x0E, 0x0A, 0x01, 0x09, 0x10] {
                    withheld = true
                    driver.advance(by: .milliseconds(1999))
                    #expect(driver.unread.isEmpty)
                    driver.advance(by: .milliseconds(1))
                    continue
                }
                driver.controller(packet)
            }
        }
        #expect(withheld)
        guard case .success(.started(let info))? = driver.result(start) else {
            Issue.record("bring-up: \(String(describing: driver.result(start)))")
            return
        }
        #expect(info.publicAddress == nil)
    }

    /// bumble's controller delivers ACL packets longer than the LE buffer size it announced (27).
    @Test("an incoming ACL packet longer than the buffer size is taken; long answers are fragmented to 27 octets")
    func oversizedACLAndFragmentation() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        driver.engine.setDatabase(try TestDatabase.make())
        driver.controller(ControllerBytes.leConnectionComplete(handle: Self.link, central: false, peer: Self.central))
        driver.controller(ControllerBytes.att(handle: Self.link, [0x02, 0x00, 0x02]))
        _ = driver.takeWritten()
        // A 40-octet Write Request in one 48-octet ACL packet.
        driver.controller(ControllerBytes.att(handle: Self.link, [0x12, 0x03, 0x00] + Array(repeating: 0x55, count: 37)))
        #expect(driver.takeATT() == [[0x13]])
        // The 100-octet value: a 101-octet Read Response, 105 octets of L2CAP in 27-octet fragments.
        driver.controller(ControllerBytes.att(handle: Self.link, [0x0A, 0x06, 0x00]))
        let fragments = driver.takeWritten()
        #expect(fragments.count == 4)
        #expect(fragments.map { $0.payload.count - 4 } == [27, 27, 27, 24])
        // Packet_Boundary_Flag: first fragment 0b00 (non-flushable start), then 0b01 (continuing).
        #expect(fragments.map { ($0.payload[$0.payload.startIndex + 1] >> 4) & 0x3 } == [0, 1, 1, 1])
        let l2cap = fragments.flatMap { Array($0.payload.dropFirst(4)) }
        #expect(Array(l2cap.dropFirst(5)) == TestDatabase.longValue)
    }

    @Test("a hardware error fails every pending request and link, and start works again")
    func hardwareError() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        driver.controller(ControllerBytes.leConnectionComplete(handle: Self.link, central: false, peer: Self.central))
        let scan = driver.perform(.startScan(ScanParameters(), filter: AdvertisingFilter()))
        let read = driver.perform(.gatt(connection: Self.link, .read(handle: 3)))
        _ = driver.takeEvents()
        driver.controller(ControllerBytes.event(0x10, [0x42]))
        #expect(driver.result(scan) != nil && driver.result(scan) != .success(.done))
        #expect(driver.result(read) == .failure(.disconnected(.hardwareFailure)))
        // The scan's machine goes to Error with the cause, as the peers' machines do.
        #expect(driver.takeEvents() == [
            .scanStateChanged(ConnectionTransition(from: .disconnected(.scanning), trigger: .failure, to: .error, handledBy: .disconnectedSuperstate),
                              cause: .hardwareError(0x42)),
            .scanStopped, .disconnected(handle: Self.link, reason: .hardwareFailure), .hardwareError(0x42),
        ])
        #expect(driver.engine.scanFailure == .hardwareError(0x42))
        #expect(!driver.engine.isRunning)
        _ = driver.takeWritten()
        driver.perform(.start)
        #expect(driver.takeWritten().map(ControllerBytes.opcode) == [.reset])
    }
}
