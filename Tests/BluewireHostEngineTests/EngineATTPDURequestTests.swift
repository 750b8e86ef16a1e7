import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import HostTestSupport
import Testing

/// `GATTClientRequest.attRequest` and `.attCommand`: ATT PDUs an application builds itself, sent
/// through the link's client queue. The peer is BluewireGATT's `GATTServer` answering byte for byte.
@Suite("Host engine: application-built ATT requests and commands")
struct EngineATTPDURequestTests {
    static let peripheral = BluetoothAddress(value: 0xC0_AA_BB_CC_DD_EE, type: .random)
    static let link: UInt16 = 0x0001

    /// A link as central to a `GATTServer` serving `TestDatabase`; nothing discovered, MTU 23.
    static func connected() throws -> (EngineDriver, GATTServer) {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        var peer = GATTServer(database: try TestDatabase.make())
        peer.connect(link)
        driver.perform(.connect(peripheral, LEConnectionParameters()))
        driver.answerCommands()
        driver.controller(ControllerBytes.leConnectionComplete(handle: link, central: true, peer: peripheral))
        driver.answerCommands()
        _ = driver.takeEvents()
        return (driver, peer)
    }

    /// Answers the one ATT PDU the engine has sent (there must be exactly one); returns it.
    static func answerOne(_ driver: inout EngineDriver, _ peer: inout GATTServer) -> [UInt8]? {
        let pdus = driver.takeATT()
        #expect(pdus.count == 1, "one request outstanding at a time, got \(pdus)")
        guard let pdu = pdus.first else { return nil }
        if let answer = peer.handle(pdu, from: link) { driver.controller(ControllerBytes.att(handle: link, answer)) }
        return pdu
    }

    @Test("a Read Request goes out as built and completes with the server's Read Response PDU")
    func answerComesBack() throws {
        var (driver, peer) = try Self.connected()
        let read = driver.perform(.gatt(connection: Self.link, .attRequest(.readRequest(handle: TestDatabase.valueHandle))))
        #expect(driver.result(read) == nil)
        #expect(Self.answerOne(&driver, &peer) == [0x0A, 0x03, 0x00])
        #expect(driver.result(read) == .success(.attResponse(.readResponse(value: [0x2A]))))
        // Not checked against the peer's state machine (the application's procedure owns its phases):
        // accepted in Connected.Idle, where the engine's own read is refused, and nothing moved.
        #expect(driver.engine.state(of: Self.peripheral) == .connected(.idle))
        #expect(!driver.takeEvents().contains { if case .stateChanged = $0 { true } else { false } })
    }

    @Test("an Error Response completes the request as a PDU, not as an error; the link goes on")
    func errorResponseIsAPDU() throws {
        var (driver, peer) = try Self.connected()
        let missing = driver.perform(.gatt(connection: Self.link, .attRequest(.readRequest(handle: 0x0050))))
        let next = driver.perform(.gatt(connection: Self.link, .attRequest(.readRequest(handle: TestDatabase.valueHandle))))
        #expect(Self.answerOne(&driver, &peer) == [0x0A, 0x50, 0x00])
        #expect(driver.result(missing) == .success(.attResponse(.errorResponse(requestOpcode: .readRequest, handle: 0x0050, error: .invalidHandle))))
        #expect(Self.answerOne(&driver, &peer) == [0x0A, 0x03, 0x00])
        #expect(driver.result(next) == .success(.attResponse(.readResponse(value: [0x2A]))))
    }

    @Test("a request waits behind the engine's own queued long read until its last Read Blob is answered")
    func waitsBehindQueuedProcedure() throws {
        var (driver, peer) = try Self.connected()
        driver.perform(.gatt(connection: Self.link, .cachedDiscovery))
        let long = driver.perform(.gatt(connection: Self.link, .readLong(handle: TestDatabase.longHandle)))
        let raw = driver.perform(.gatt(connection: Self.link, .attRequest(.readRequest(handle: TestDatabase.valueHandle))))
        var sent: [[UInt8]] = []
        while driver.result(long) == nil {
            #expect(driver.result(raw) == nil, "the raw request went before the long read finished")
            guard let pdu = Self.answerOne(&driver, &peer) else { break }
            sent.append(pdu)
        }
        #expect(driver.result(long) == .success(.value(TestDatabase.longValue)))
        // Read, then Read Blobs of 22 octets each: 100 octets take a Read and four Read Blobs.
        #expect(sent.map { $0[0] } == [0x0A, 0x0C, 0x0C, 0x0C, 0x0C])
        #expect(driver.result(raw) == nil)
        #expect(Self.answerOne(&driver, &peer) == [0x0A, 0x03, 0x00])
        #expect(driver.result(raw) == .success(.attResponse(.readResponse(value: [0x2A]))))
    }

    @Test("responses, notifications, confirmations and commands are refused as requests, requests as commands; nothing is sent")
    func badPDUsRefused() throws {
        var (driver, _) = try Self.connected()
        let notRequests: [ATTPDU] = [
            .readResponse(value: [1]), .errorResponse(requestOpcode: .readRequest, handle: 3, error: .invalidHandle),
            .handleValueNotification(handle: 3, value: [1]), .handleValueIndication(handle: 3, value: [1]),
            .handleValueConfirmation, .writeCommand(handle: 3, value: [1]), .unknown(ATTOpcode(0x7F), parameters: []),
        ]
        for pdu in notRequests {
            let id = driver.perform(.gatt(connection: Self.link, .attRequest(pdu)))
            #expect(driver.result(id) == .failure(.att(.notARequest(pdu.opcode))), "\(pdu)")
        }
        let notCommands: [ATTPDU] = [
            .readRequest(handle: 3), .writeResponse, .handleValueNotification(handle: 3, value: [1]), .handleValueConfirmation,
        ]
        for pdu in notCommands {
            let id = driver.perform(.gatt(connection: Self.link, .attCommand(pdu)))
            #expect(driver.result(id) == .failure(.att(.notACommand(pdu.opcode))), "\(pdu)")
        }
        #expect(driver.takeATT().isEmpty)
        #expect(driver.engine.nextDeadline == nil, "no transaction started")
    }

    @Test("a request or command longer than ATT_MTU (23) is refused and nothing is sent; one of exactly 23 octets goes")
    func mtuOverflowRefused() throws {
        var (driver, peer) = try Self.connected()
        let tooLong = [UInt8](repeating: 0x55, count: 21)  // opcode + handle + 21 = 24 octets
        let request = driver.perform(.gatt(connection: Self.link, .attRequest(.writeRequest(handle: 3, value: tooLong[...]))))
        #expect(driver.result(request) == .failure(.att(.pduTooLong(length: 24, mtu: 23))))
        let command = driver.perform(.gatt(connection: Self.link, .attCommand(.writeCommand(handle: 3, value: tooLong[...]))))
        #expect(driver.result(command) == .failure(.att(.pduTooLong(length: 24, mtu: 23))))
        #expect(driver.takeATT().isEmpty)
        // The queue goes on: 20 octets (23 in all) fit and go out; whatever the server answers completes it.
        let fits = driver.perform(.gatt(connection: Self.link, .attRequest(.writeRequest(handle: 3, value: tooLong.prefix(20)))))
        #expect(Self.answerOne(&driver, &peer)?.count == 23)
        guard case .success(.attResponse)? = driver.result(fits) else {
            Issue.record("the 23-octet write got \(String(describing: driver.result(fits)))")
            return
        }
    }

    @Test("commands go out at once and in order, even while a request is outstanding")
    func commandsInOrder() throws {
        var (driver, peer) = try Self.connected()
        let read = driver.perform(.gatt(connection: Self.link, .attRequest(.readRequest(handle: TestDatabase.valueHandle))))
        let outstanding = driver.takeATT()
        #expect(outstanding == [[0x0A, 0x03, 0x00]])
        let first = driver.perform(.gatt(connection: Self.link, .attCommand(.writeCommand(handle: 3, value: [1]))))
        let second = driver.perform(.gatt(connection: Self.link, .attCommand(.writeCommand(handle: 3, value: [2]))))
        #expect(driver.result(first) == .success(.done))
        #expect(driver.result(second) == .success(.done))
        #expect(driver.takeATT() == [[0x52, 0x03, 0x00, 0x01], [0x52, 0x03, 0x00, 0x02]])
        if let answer = peer.handle(outstanding[0], from: Self.link) { driver.controller(ControllerBytes.att(handle: Self.link, answer)) }
        #expect(driver.result(read) == .success(.attResponse(.readResponse(value: [0x2A]))))
    }

    @Test("disconnection fails the outstanding and the queued request with the reason")
    func disconnectionFailsPending() throws {
        var (driver, _) = try Self.connected()
        let outstanding = driver.perform(.gatt(connection: Self.link, .attRequest(.readRequest(handle: 3))))
        let queued = driver.perform(.gatt(connection: Self.link, .attRequest(.readRequest(handle: 6))))
        #expect(driver.takeATT() == [[0x0A, 0x03, 0x00]])
        driver.controller(ControllerBytes.disconnectionComplete(handle: Self.link, reason: 0x08))
        #expect(driver.result(outstanding) == .failure(.disconnected(.connectionTimeout)))
        #expect(driver.result(queued) == .failure(.disconnected(.connectionTimeout)))
        let after = driver.perform(.gatt(connection: Self.link, .attRequest(.readRequest(handle: 3))))
        #expect(driver.result(after) == .failure(.unknownConnection(Self.link)))
        let command = driver.perform(.gatt(connection: Self.link, .attCommand(.writeCommand(handle: 3, value: [1]))))
        #expect(driver.result(command) == .failure(.unknownConnection(Self.link)))
    }

    @Test("cancelGATT withdraws a queued request, which is never sent; the one on the air runs to its answer")
    func cancelWithdrawsQueued() throws {
        var (driver, peer) = try Self.connected()
        let outstanding = driver.perform(.gatt(connection: Self.link, .attRequest(.readRequest(handle: 3))))
        let queued = driver.perform(.gatt(connection: Self.link, .attRequest(.writeRequest(handle: 3, value: [7]))))
        let last = driver.perform(.gatt(connection: Self.link, .attRequest(.readRequest(handle: 6))))
        let onAir = driver.perform(.cancelGATT(connection: Self.link, request: outstanding))
        let withdraw = driver.perform(.cancelGATT(connection: Self.link, request: queued))
        #expect(driver.result(onAir) == .success(.done))
        #expect(driver.result(withdraw) == .success(.done))
        #expect(driver.result(queued) == .failure(.cancelled))
        #expect(driver.result(outstanding) == nil, "the request on the air is not withdrawn")
        #expect(Self.answerOne(&driver, &peer) == [0x0A, 0x03, 0x00])
        #expect(driver.result(outstanding) == .success(.attResponse(.readResponse(value: [0x2A]))))
        // The Write Request never went: the next one on the air is the last read.
        #expect(Self.answerOne(&driver, &peer) == [0x0A, 0x06, 0x00])
        guard case .success(.attResponse(.readResponse))? = driver.result(last) else {
            Issue.record("last read: \(String(describing: driver.result(last)))")
            return
        }
        #expect(driver.takeATT().isEmpty)
        let unknown = driver.perform(.cancelGATT(connection: 0x0999, request: last))
        #expect(driver.result(unknown) == .failure(.unknownConnection(0x0999)))
    }

    @Test("an unanswered request times out after 30 s of virtual time (§3.3.3), and the peer's machine goes to Error")
    func transactionTimeout() throws {
        var (driver, _) = try Self.connected()
        let read = driver.perform(.gatt(connection: Self.link, .attRequest(.readRequest(handle: 3))))
        _ = driver.takeWritten()
        #expect(driver.engine.nextDeadline == driver.now + .seconds(30))
        driver.advance(by: .seconds(29))
        #expect(driver.result(read) == nil)
        driver.advance(by: .seconds(1))
        #expect(driver.result(read) == .failure(.att(.transactionTimeout)))
        #expect(driver.engine.state(of: Self.peripheral) == .error)
    }
}
