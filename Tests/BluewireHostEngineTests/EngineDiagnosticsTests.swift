import BluewireATT
import BluewireCore
import BluewireHCI
import BluewireHostEngine
import HostTestSupport
import Testing

/// The engine's read-only diagnostic counts (HostEngine+Diagnostics): ACL packets in flight, partly
/// reassembled L2CAP PDUs, the local server's pending indications and the local client's pending
/// requests, each rising with what the engine holds and back to zero once it is answered or the link ends.
@Suite("Host engine: diagnostics")
struct EngineDiagnosticsTests {
    static let peer = BluetoothAddress(value: 0xF0_11_22_33_44_55, type: .random)
    static let link: UInt16 = 0x0040

    /// A central connected to the engine's server, subscribed with `cccd` (1 notifications, 2 indications).
    static func served(cccd: UInt8) throws -> EngineDriver {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        driver.engine.setDatabase(try TestDatabase.make())
        driver.controller(ControllerBytes.leConnectionComplete(handle: link, central: false, peer: peer))
        driver.controller(ControllerBytes.att(handle: link, [0x12, 0x04, 0x00, cccd, 0x00]))
        return driver
    }

    @Test("ACL packets in flight count per link and in total until Number Of Completed Packets returns them")
    func aclPacketsInFlight() throws {
        var driver = try Self.served(cccd: 0x01)
        let sent = driver.takeWritten().filter { $0.type == .acl }.count
        #expect(sent == 1, "the Write Response")
        #expect(driver.engine.aclPacketsInFlight(connection: Self.link) == 1)
        for i in 0..<70 { driver.perform(.notify(valueHandle: TestDatabase.valueHandle, value: [UInt8(i)], connection: Self.link)) }
        // bumble's 64 buffers are all taken (the Write Response and 63 notifications); 7 notifications wait.
        #expect(driver.engine.aclPacketsInFlight(connection: Self.link) == 64)
        #expect(driver.engine.aclPacketsInFlight == 64)
        #expect(driver.engine.queuedACLPackets(connection: Self.link) == 7)
        driver.controller(ControllerBytes.completedPackets(handle: Self.link, count: 10))
        #expect(driver.engine.aclPacketsInFlight(connection: Self.link) == 61, "10 returned, the 7 waiting went")
        #expect(driver.engine.aclPacketsInFlight(connection: 0x0041) == 0)
        driver.controller(ControllerBytes.disconnectionComplete(handle: Self.link, reason: 0x13))
        #expect(driver.engine.aclPacketsInFlight == 0, "a link's end frees its buffers (§7.7.5)")
    }

    @Test("a partly received L2CAP PDU is counted until its last fragment, and forgotten when the link ends")
    func partialL2CAPPDUs() throws {
        var driver = try Self.served(cccd: 0x01)
        _ = driver.takeWritten()
        let le16 = ControllerBytes.le16
        // A Read Request of handle 3 (3 octets) in two fragments: PB 0b10 with its first octet, then 0b01.
        let start = HCIPacket(type: .acl, payload: le16(Self.link | 0x2000) + le16(5) + le16(3) + le16(0x0004) + [0x0A])
        let rest = HCIPacket(type: .acl, payload: le16(Self.link | 0x1000) + le16(2) + [0x03, 0x00])
        #expect(driver.engine.partialL2CAPPDUs == 0)
        driver.controller(start)
        #expect(driver.engine.isReassemblingL2CAPPDU(connection: Self.link))
        #expect(driver.engine.partialL2CAPPDUs == 1)
        #expect(driver.takeATT().isEmpty)
        driver.controller(rest)
        #expect(!driver.engine.isReassemblingL2CAPPDU(connection: Self.link))
        #expect(driver.engine.partialL2CAPPDUs == 0)
        #expect(driver.takeATT() == [[0x0B, 0x2A]], "the whole request was answered")

        driver.controller(start)
        #expect(driver.engine.partialL2CAPPDUs == 1)
        driver.controller(ControllerBytes.disconnectionComplete(handle: Self.link, reason: 0x13))
        #expect(driver.engine.partialL2CAPPDUs == 0)
        #expect(!driver.engine.isReassemblingL2CAPPDU(connection: Self.link))
    }

    @Test("indications pending on a link: the one awaiting confirmation and those queued behind it")
    func pendingIndications() throws {
        var driver = try Self.served(cccd: 0x02)
        _ = driver.takeWritten()
        #expect(driver.engine.pendingIndications(connection: Self.link) == 0)
        let first = driver.perform(.indicate(valueHandle: TestDatabase.valueHandle, value: [1], connection: Self.link))
        let second = driver.perform(.indicate(valueHandle: TestDatabase.valueHandle, value: [2], connection: Self.link))
        #expect(driver.takeATT() == [[0x1D, 0x03, 0x00, 0x01]], "one indication at a time (Core Vol 3 Part F §3.4.7.2)")
        #expect(driver.engine.pendingIndications(connection: Self.link) == 2)
        #expect(driver.engine.pendingIndications == 2)
        driver.controller(ControllerBytes.att(handle: Self.link, [0x1E]))
        #expect(driver.result(first) == .success(.done))
        #expect(driver.takeATT() == [[0x1D, 0x03, 0x00, 0x02]])
        #expect(driver.engine.pendingIndications(connection: Self.link) == 1)
        driver.controller(ControllerBytes.att(handle: Self.link, [0x1E]))
        #expect(driver.result(second) == .success(.done))
        #expect(driver.engine.pendingIndications == 0)
    }

    @Test("client requests pending on a link: the outstanding one and those queued, none once answered")
    func pendingClientRequests() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        driver.perform(.connect(Self.peer, LEConnectionParameters()))
        driver.answerCommands()
        driver.controller(ControllerBytes.leConnectionComplete(handle: Self.link, central: true, peer: Self.peer))
        driver.answerCommands()
        _ = driver.takeWritten()
        #expect(driver.engine.pendingClientRequests(connection: Self.link) == 0)
        let first = driver.perform(.gatt(connection: Self.link, .attRequest(.readRequest(handle: 3))))
        let second = driver.perform(.gatt(connection: Self.link, .attRequest(.readRequest(handle: 6))))
        #expect(driver.takeATT() == [[0x0A, 0x03, 0x00]], "one request at a time (Core Vol 3 Part F §3.3.2)")
        #expect(driver.engine.pendingClientRequests(connection: Self.link) == 2)
        #expect(driver.engine.pendingClientRequests == 2)
        driver.controller(ControllerBytes.att(handle: Self.link, [0x0B, 0x2A]))
        #expect(driver.result(first) == .success(.attResponse(.readResponse(value: [0x2A]))))
        #expect(driver.engine.pendingClientRequests(connection: Self.link) == 1)
        driver.controller(ControllerBytes.att(handle: Self.link, [0x0B, 0x2B]))
        #expect(driver.result(second) != nil)
        #expect(driver.engine.pendingClientRequests == 0)
        #expect(driver.engine.pendingClientRequests(connection: 0x0099) == 0, "no link, nothing pending")
    }
}
