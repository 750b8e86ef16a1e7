import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import HostTestSupport
import Testing

/// The engine as a central. The peer's GATT server is BluewireGATT's `GATTServer` answering the
/// engine's requests byte for byte.
@Suite("Host engine: central role")
struct CentralEngineTests {
    static let peripheral = BluetoothAddress(value: 0xC0_AA_BB_CC_DD_EE, type: .random)
    static let link: UInt16 = 0x0001

    /// An engine brought up from the bumble capture, connected as central to `peripheral` on `link`,
    /// its link set-up commands answered.
    static func connectedDriver() throws -> EngineDriver {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        driver.perform(.connect(peripheral, LEConnectionParameters()))
        driver.answerCommands()
        driver.controller(ControllerBytes.leConnectionComplete(handle: link, central: true, peer: peripheral))
        driver.answerCommands()
        return driver
    }

    /// The confirmed bug of the actor: scan then stop at once put Disable, Parameters, Enable on the wire.
    @Test("scan then stop at once: parameters, enable, then disable, and the controller ends up not scanning")
    func scanThenStop() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        let start = driver.perform(.startScan(ScanParameters(), filter: AdvertisingFilter()))
        let stop = driver.perform(.stopScan)
        #expect(driver.answerCommands() == [.leSetScanParameters, .leSetScanEnable, .leSetScanEnable])
        let enables = driver.written.filter { ControllerBytes.opcode($0) == .leSetScanEnable }.map { Array($0.payload.suffix(2)) }
        #expect(enables == [[0x01, 0x00], [0x00, 0x00]])
        #expect(driver.result(start) == .success(.done))
        #expect(driver.result(stop) == .success(.done))
        // The scan's machine went Initial → Scanning → Initial, then the scan was reported stopped.
        #expect(driver.takeEvents() == [
            .scanStateChanged(ConnectionTransition(from: .initial, trigger: .startScan, to: .disconnected(.scanning), handledBy: .state), cause: nil),
            .scanStateChanged(ConnectionTransition(from: .disconnected(.scanning), trigger: .stopScan, to: .initial, handledBy: .state), cause: nil),
            .scanStopped,
        ])
        #expect(!driver.engine.isScanning)
        #expect(driver.engine.scanState == .initial)
    }

    @Test("scan reports devices through the aggregator")
    func scanReports() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        driver.perform(.startScan(ScanParameters(), filter: AdvertisingFilter()))
        driver.answerCommands()
        driver.controller(ControllerBytes.advertisingReport(Self.peripheral, data: [0x05, 0x09] + Array("peer".utf8)))
        var events = driver.takeEvents()
        #expect(events.first == .scanStateChanged(
            ConnectionTransition(from: .initial, trigger: .startScan, to: .disconnected(.scanning), handledBy: .state), cause: nil))
        events.removeFirst()
        // DeviceFound, Scanning's self-transition, is not reported twice: `.deviceFound` is the event.
        #expect(events.count == 1)
        #expect(driver.engine.scanState == .disconnected(.scanning))
        guard case .deviceFound(let device)? = events.first else { return }
        #expect(device.address == Self.peripheral)
        #expect(device.name == "peer")
    }

    @Test("connect then cancel at once: Create Connection, then Create Connection Cancel")
    func connectThenCancel() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        let connect = driver.perform(.connect(Self.peripheral, LEConnectionParameters()))
        let cancel = driver.perform(.cancelConnect)
        #expect(driver.result(connect) == .failure(.cancelled))
        let opcodes = driver.answerCommands()
        #expect(opcodes.suffix(2) == [.leCreateConnection, .leCreateConnectionCancel])
        #expect(driver.result(cancel) == .success(.done))
        // The peer's machine went Connecting → Initial (a cancel is not a failure).
        #expect(driver.takeEvents().map { event -> ConnectionTrigger? in
            if case .stateChanged(_, let transition, nil) = event { return transition.trigger }
            return nil
        } == [.connect, .disconnect])
        // The controller's answer to the cancel (§7.8.13): Connection Complete with Unknown Connection Identifier.
        driver.controller(ControllerBytes.leConnectionComplete(handle: 0, central: true, peer: Self.peripheral, status: 0x02))
        #expect(driver.takeEvents().isEmpty)
        // A new attempt is allowed now.
        let again = driver.perform(.connect(Self.peripheral, LEConnectionParameters()))
        #expect(driver.result(again) == nil)
    }

    /// A connection bumble's controller makes although it was cancelled is disconnected.
    @Test("a connection completing after the cancel is disconnected")
    func lateConnectionDisconnected() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        driver.perform(.connect(Self.peripheral, LEConnectionParameters()))
        driver.perform(.cancelConnect)
        driver.answerCommands()
        driver.controller(ControllerBytes.leConnectionComplete(handle: Self.link, central: true, peer: Self.peripheral))
        #expect(driver.answerCommands() == [.disconnect])
    }

    @Test("connect, discover all, read, read long, write, subscribe, receive notifications and indications")
    func centralSession() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        var peer = GATTServer(database: try TestDatabase.make())
        peer.connect(Self.link)

        let connect = driver.perform(.connect(Self.peripheral, LEConnectionParameters()))
        driver.answerCommands()
        #expect(driver.result(connect) == nil)
        driver.controller(ControllerBytes.leConnectionComplete(handle: Self.link, central: true, peer: Self.peripheral))
        let connection = HostConnection(handle: Self.link, peer: Self.peripheral, role: .central, interval: 0x0018)
        #expect(driver.result(connect) == .success(.connected(connection)))
        // After the link is up: LE Set Data Length (bumble answers a bare status 0x01; not a failure).
        let setup = driver.takeWritten()
        #expect(setup.map(ControllerBytes.opcode) == [.leSetDataLength])
        driver.controller(ControllerBytes.event(0x0E, [1] + ControllerBytes.le16(HCIOpcode.leSetDataLength.rawValue) + [0x01]))
        #expect(driver.takeWritten().isEmpty)

        let mtu = driver.perform(.gatt(connection: Self.link, .exchangeMTU))
        let discover = driver.perform(.gatt(connection: Self.link, .discoverAll))
        let read = driver.perform(.gatt(connection: Self.link, .read(handle: TestDatabase.valueHandle)))
        var requests = 0
        // The peer answers one request at a time; the engine must never have two outstanding.
        while true {
            let pdus = driver.takeATT()
            guard !pdus.isEmpty else { break }
            #expect(pdus.count == 1)
            for pdu in pdus {
                requests += 1
                if let answer = peer.handle(pdu, from: Self.link) {
                    driver.controller(ControllerBytes.att(handle: Self.link, answer))
                }
                if pdu.first == 0x02 { peer.setMTU(247, for: Self.link) }
            }
        }
        #expect(driver.result(mtu) == .success(.mtu(247)))
        guard case .success(.services(let services))? = driver.result(discover) else {
            Issue.record("discover: \(String(describing: driver.result(discover)))")
            return
        }
        #expect(services.map(\.service.uuid) == [TestDatabase.service])
        #expect(services.first?.characteristics.map(\.characteristic.uuid) == [BluetoothUUID(0xFFF1), BluetoothUUID(0xFFF2)])
        let characteristic = try #require(services.first?.characteristics.first)
        #expect(characteristic.clientConfigurationHandle == TestDatabase.cccdHandle)
        #expect(driver.result(read) == .success(.value([0x2A])))
        #expect(requests >= 6)

        let long = driver.perform(.gatt(connection: Self.link, .readLong(handle: TestDatabase.longHandle)))
        let write = driver.perform(.gatt(connection: Self.link, .write(handle: TestDatabase.valueHandle, value: [9])))
        let subscribe = driver.perform(.gatt(connection: Self.link, .subscribe(
            characteristic.characteristic, indications: false, descriptorHandle: characteristic.clientConfigurationHandle)))
        while true {
            let pdus = driver.takeATT()
            guard !pdus.isEmpty else { break }
            for pdu in pdus {
                if let answer = peer.handle(pdu, from: Self.link) {
                    driver.controller(ControllerBytes.att(handle: Self.link, answer))
                }
            }
        }
        #expect(driver.result(long) == .success(.value(TestDatabase.longValue)))
        #expect(driver.result(write) == .success(.done))
        #expect(driver.result(subscribe) == .success(.configured(descriptorHandle: TestDatabase.cccdHandle)))
        #expect(peer.subscription(connection: Self.link, valueHandle: TestDatabase.valueHandle).notifications)
        _ = driver.takeEvents()

        for pdu in try peer.notify(handle: TestDatabase.valueHandle, value: [5, 6]) {
            driver.controller(ControllerBytes.att(handle: Self.link, pdu.bytes))
        }
        #expect(driver.takeEvents() == [.notification(connection: Self.link, attribute: 3, value: [5, 6], isIndication: false)])
        // An indication is confirmed by the engine (§3.4.7.2).
        driver.controller(ControllerBytes.att(handle: Self.link, [0x1D, 0x03, 0x00, 0x07]))
        #expect(driver.takeEvents() == [.notification(connection: Self.link, attribute: 3, value: [7], isIndication: true)])
        #expect(driver.takeATT() == [[0x1E]])
    }

    @Test("disconnection fails every pending GATT operation with the reason")
    func disconnectionFailsPending() throws {
        var driver = try Self.connectedDriver()
        // Handles known without a discovery on this link: the machine takes them as discovered.
        let cached = driver.perform(.gatt(connection: Self.link, .cachedDiscovery))
        #expect(driver.result(cached) == .success(.done))
        let first = driver.perform(.gatt(connection: Self.link, .read(handle: 3)))
        let second = driver.perform(.gatt(connection: Self.link, .discoverAll))
        #expect(driver.takeATT() == [[0x0A, 0x03, 0x00]])
        driver.controller(ControllerBytes.disconnectionComplete(handle: Self.link, reason: 0x08))
        #expect(driver.result(first) == .failure(.disconnected(.connectionTimeout)))
        #expect(driver.result(second) == .failure(.disconnected(.connectionTimeout)))
        #expect(driver.perform(.gatt(connection: Self.link, .read(handle: 3))) == HostRequestID(driver.nextID - 1))
        #expect(driver.completions.last?.1 == .failure(.unknownConnection(Self.link)))
        #expect(driver.engine.nextDeadline == nil)
    }

    @Test("an MTU exchange the server refuses (Request Not Supported) completes with ATT_MTU 23, and the link goes on")
    func refusedMTUExchange() throws {
        var driver = try Self.connectedDriver()
        let mtu = driver.perform(.gatt(connection: Self.link, .exchangeMTU))
        #expect(driver.takeATT() == [[0x02, 0xF7, 0x00]])  // Exchange MTU Request, Client Rx MTU 247 (the driver's)
        // Error Response: request opcode 0x02, handle 0, Request Not Supported (0x06), Core Vol 3 Part F §3.4.1.1.
        driver.controller(ControllerBytes.att(handle: Self.link, [0x01, 0x02, 0x00, 0x00, 0x06]))
        #expect(driver.result(mtu) == .success(.mtu(23)))
        // The bearer is still usable: the next request goes out.
        driver.perform(.gatt(connection: Self.link, .cachedDiscovery))
        let read = driver.perform(.gatt(connection: Self.link, .read(handle: 3)))
        #expect(driver.takeATT() == [[0x0A, 0x03, 0x00]])
        driver.controller(ControllerBytes.att(handle: Self.link, [0x0B, 0x42]))
        #expect(driver.result(read) == .success(.value([0x42])))
    }

    @Test("the ATT transaction times out after 30 s of virtual time and the link is dropped")
    func attTimeout() throws {
        var driver = try Self.connectedDriver()
        driver.perform(.gatt(connection: Self.link, .cachedDiscovery))
        let read = driver.perform(.gatt(connection: Self.link, .read(handle: 3)))
        let queued = driver.perform(.gatt(connection: Self.link, .read(handle: 6)))
        _ = driver.takeWritten()
        let deadline = try #require(driver.engine.nextDeadline)
        #expect(deadline == driver.now + .seconds(30))
        driver.advance(by: .seconds(29))
        #expect(driver.result(read) == nil)
        driver.advance(by: .seconds(1))
        #expect(driver.result(read) == .failure(.att(.transactionTimeout)))
        // The timeout put the peer's machine in Error, which refuses everything but Reset: the queued
        // read is refused there and never reaches the closed bearer.
        #expect(driver.result(queued) == .failure(.refused(state: .error, trigger: .read)))
        #expect(driver.engine.failure(of: Self.peripheral) == .att(.transactionTimeout))
        // Core Vol 3 Part F §3.3.3: no more ATT on this bearer; the engine disconnects.
        #expect(driver.answerCommands() == [.disconnect])
    }

    @Test("an unanswered command times out in microseconds of virtual time")
    func commandTimeout() throws {
        var driver = EngineDriver(configuration: HostEngineConfiguration(
            randomAddress: BluetoothAddress(value: 0xC45A1700B10E, type: .random), commandTimeout: .microseconds(500)))
        _ = try driver.bringUpFromBumbleCapture()
        let scan = driver.perform(.startScan(ScanParameters(), filter: AdvertisingFilter()))
        #expect(driver.takeWritten().map(ControllerBytes.opcode) == [.leSetScanParameters])
        #expect(driver.engine.nextDeadline == driver.now + .microseconds(500))
        driver.advance(by: .microseconds(499))
        #expect(driver.result(scan) == nil)
        driver.advance(by: .microseconds(1))
        #expect(driver.result(scan) == .failure(.command(.timeout(.leSetScanParameters))))
        #expect(!driver.engine.isScanning)
        // The failed start put the scan's machine in Error, with the cause; scanning is refused until reset.
        #expect(driver.engine.scanState == .error)
        #expect(driver.engine.scanFailure == .command(.timeout(.leSetScanParameters)))
        let refused = driver.perform(.startScan(ScanParameters(), filter: AdvertisingFilter()))
        #expect(driver.result(refused) == .failure(.refused(state: .error, trigger: .startScan)))
        #expect(driver.takeWritten().isEmpty)
        let reset = driver.perform(.resetScan)
        #expect(driver.result(reset) == .success(.done))
        #expect(driver.engine.scanState == .initial)
        // The next request goes out: one credit is given back after a timeout.
        driver.perform(.startScan(ScanParameters(), filter: AdvertisingFilter()))
        #expect(driver.takeWritten().map(ControllerBytes.opcode) == [.leSetScanParameters])
    }
}

/// The two connection failures that neither bumble's controller nor the virtual one produce on demand, so
/// the controller's answers are scripted here (the only fakes in this suite; Core Vol 4 Part E §7.7.65.1,
/// §7.7.15): the peer's machine goes to Error with the cause, and Connect is refused there until Reset.
@Suite("Host engine: failed connection attempts (scripted controller answers)")
struct FailedConnectionEngineTests {
    static let peripheral = CentralEngineTests.peripheral

    /// (from, trigger, to, cause) of every `.stateChanged` for the peripheral.
    static func transitions(_ events: [HostEngineEvent]) -> [String] {
        events.compactMap {
            guard case .stateChanged(let address, let transition, let cause) = $0, address == peripheral else { return nil }
            return cause.map { "\(transition) (\($0))" } ?? "\(transition)"
        }
    }

    @Test("LE Connection Complete with an error status: the attempt fails with it, the peer goes to Error, Connect is refused until Reset")
    func errorStatusConnectionComplete() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        let connect = driver.perform(.connect(Self.peripheral, LEConnectionParameters()))
        #expect(driver.answerCommands().last == .leCreateConnection)
        // Connection Failed to be Established (0x3E).
        driver.controller(ControllerBytes.leConnectionComplete(handle: 0, central: true, peer: Self.peripheral, status: 0x3E))
        #expect(driver.result(connect) == .failure(.connectionFailed(.connectionFailedToBeEstablished)))
        #expect(Self.transitions(driver.takeEvents()) == [
            "Disconnected.Initial --Connect--> Disconnected.Connecting",
            "Disconnected.Connecting --Failure--> Error (connectionFailed(Connection Failed to be Established (0x3e)))",
        ])
        #expect(driver.engine.failure(of: Self.peripheral) == .connectionFailed(.connectionFailedToBeEstablished))
        let again = driver.perform(.connect(Self.peripheral, LEConnectionParameters()))
        #expect(driver.result(again) == .failure(.refused(state: .error, trigger: .connect)))
        #expect(driver.takeWritten().isEmpty, "a refused Connect sends nothing")
        let reset = driver.perform(.reset(Self.peripheral))
        #expect(driver.result(reset) == .success(.done))
        let retry = driver.perform(.connect(Self.peripheral, LEConnectionParameters()))
        #expect(driver.result(retry) == nil)
        #expect(driver.answerCommands().last == .leCreateConnection)
    }

    @Test("LE Create Connection refused by the controller (Command Status with an error): Failure with the command's error")
    func refusedCreateConnection() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        let connect = driver.perform(.connect(Self.peripheral, LEConnectionParameters()))
        // The PHY preference goes first and is answered; then LE Create Connection.
        for command in driver.takeWritten() where ControllerBytes.opcode(command) != .leCreateConnection {
            if let answer = ControllerBytes.answer(command) { driver.controller(answer) }
        }
        #expect(driver.takeWritten().map(ControllerBytes.opcode) == [.leCreateConnection])
        // Command Disallowed (0x0C), as a controller that is already creating a connection answers.
        driver.controller(ControllerBytes.commandStatus(.leCreateConnection, status: 0x0C))
        guard case .failure(let error)? = driver.result(connect) else {
            Issue.record("connect: \(String(describing: driver.result(connect)))")
            return
        }
        #expect(driver.engine.state(of: Self.peripheral) == .error)
        #expect(driver.engine.failure(of: Self.peripheral) == error)
        let transitions = Self.transitions(driver.takeEvents())
        #expect(transitions.count == 2)
        #expect(transitions.last?.hasPrefix("Disconnected.Connecting --Failure--> Error (") == true)
        #expect(transitions.last?.contains("Command Disallowed") == true, "\(transitions)")
    }
}
