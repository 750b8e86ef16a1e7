import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import HostTestSupport
import Testing

/// The engine as a peripheral, scripted exchange by exchange; bring-up is bumble's recorded answers.
@Suite("Host engine: peripheral role")
struct PeripheralEngineTests {
    static let central = BluetoothAddress(value: 0xF0_11_22_33_44_55, type: .random)
    static let link: UInt16 = 0x0040

    @Test("bring-up replays the bumble capture byte for byte and reports the controller")
    func bringUp() throws {
        var driver = EngineDriver()
        let info = try driver.bringUpFromBumbleCapture()
        #expect(info.leACLDataPacketLength == 27)
        #expect(info.totalNumLEACLDataPackets == 64)
        #expect(driver.engine.isRunning)
        #expect(driver.engine.nextDeadline == nil)
    }

    /// Advertising, a central connecting, MTU exchange, read, CCCD write, notification,
    /// disconnection and readvertising.
    @Test("advertise, serve a connected central, notify, readvertise after disconnection")
    func serveOneCentral() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        driver.engine.setDatabase(try TestDatabase.make())

        let advertise = driver.perform(.startAdvertising(.named("engine", services: [TestDatabase.service])))
        // One command at a time: only parameters are out before the controller answers.
        #expect(driver.unread.count == 1)
        let opcodes = driver.answerCommands()
        #expect(opcodes == [.leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData, .leSetAdvertisingEnable])
        let advertisingData = driver.written.first { ControllerBytes.opcode($0) == .leSetAdvertisingData }
        // Flags, the 16-bit service UUID list and the name, in the 32-octet parameter (§7.8.7).
        let expectedData: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0xF0, 0xFF, 0x07, 0x09] + Array("engine".utf8)
        #expect(advertisingData.map { Array($0.payload.dropFirst(4).prefix(expectedData.count)) } == expectedData)
        #expect(driver.result(advertise) == .success(.done))
        #expect(driver.takeEvents() == [.advertisingStarted])
        #expect(driver.engine.isAdvertising)

        driver.controller(ControllerBytes.leConnectionComplete(handle: Self.link, central: false, peer: Self.central))
        let connection = HostConnection(handle: Self.link, peer: Self.central, role: .peripheral, interval: 0x0018)
        #expect(driver.takeEvents() == [.connected(connection), .advertisingStopped])
        // The peripheral asks for longer link-layer packets too (§7.8.33), and nothing else.
        #expect(driver.answerCommands() == [.leSetDataLength])

        // Exchange MTU (§3.4.2): the server answers with its Rx MTU (247) and both use the smaller.
        driver.controller(ControllerBytes.att(handle: Self.link, [0x02, 0x00, 0x02]))
        #expect(driver.takeATT() == [[0x03, 0xF7, 0x00]])
        #expect(driver.takeEvents() == [.mtuChanged(connection: Self.link, mtu: 247)])
        #expect(driver.engine.mtu(connection: Self.link) == 247)

        driver.controller(ControllerBytes.att(handle: Self.link, [0x0A, 0x03, 0x00]))
        #expect(driver.takeATT() == [[0x0B, 0x2A]])
        #expect(driver.takeEvents() == [.serverRead(connection: Self.link, handle: 3, offset: 0, value: [0x2A])])

        // CCCD write: notifications on.
        driver.controller(ControllerBytes.att(handle: Self.link, [0x12, 0x04, 0x00, 0x01, 0x00]))
        #expect(driver.takeATT() == [[0x13]])
        #expect(driver.takeEvents() == [.server(.subscriptionChanged(GATTSubscription(
            connection: Self.link, valueHandle: TestDatabase.valueHandle, configuration: 1)))])

        let notify = driver.perform(.notify(valueHandle: TestDatabase.valueHandle, value: [1, 2, 3], connection: nil))
        #expect(driver.takeATT() == [[0x1B, 0x03, 0x00, 1, 2, 3]])
        #expect(driver.result(notify) == .success(.notified([Self.link])))

        // A write from the central changes the database and is reported.
        driver.controller(ControllerBytes.att(handle: Self.link, [0x12, 0x03, 0x00, 0x07]))
        #expect(driver.takeATT() == [[0x13]])
        #expect(driver.takeEvents() == [.server(.valueWritten(connection: Self.link, handle: 3, value: [0x07]))])

        // LE signaling: an unknown command is rejected (Core Vol 3 Part A §4.1).
        driver.controller(ControllerBytes.l2cap(handle: Self.link, channel: 0x0005, [0x0A, 0x01, 0x02, 0x00, 0x02, 0x00]))
        let signaling = driver.takeWritten().map { Array($0.payload.dropFirst(8)) }
        #expect(signaling.first?.first == 0x01)

        driver.controller(ControllerBytes.disconnectionComplete(handle: Self.link, reason: 0x13))
        #expect(driver.takeEvents() == [.disconnected(handle: Self.link, reason: .remoteUserTerminatedConnection)])
        // Readvertising: the same advertisement, enabled again.
        #expect(driver.answerCommands() == [.leSetAdvertisingEnable])
        #expect(driver.takeEvents() == [.advertisingStarted])
        #expect(driver.engine.connectionHandles.isEmpty)
    }

    @Test("advertise then stop at once: parameters, data, scan response, enable, then disable")
    func advertiseThenStop() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        let start = driver.perform(.startAdvertising(.named("engine")))
        let stop = driver.perform(.stopAdvertising)
        #expect(driver.answerCommands() == [
            .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData, .leSetAdvertisingEnable,
            .leSetAdvertisingEnable,
        ])
        let enables = driver.written.filter { ControllerBytes.opcode($0) == .leSetAdvertisingEnable }.map { $0.payload.last }
        #expect(enables == [0x01, 0x00])
        #expect(driver.result(start) == .success(.done))
        #expect(driver.result(stop) == .success(.done))
        #expect(!driver.engine.isAdvertising)
    }

    @Test("notifications go out under ACL credits: the rest waits for Number Of Completed Packets")
    func aclCredits() throws {
        var driver = EngineDriver()
        _ = try driver.bringUpFromBumbleCapture()
        driver.engine.setDatabase(try TestDatabase.make())
        driver.controller(ControllerBytes.leConnectionComplete(handle: Self.link, central: false, peer: Self.central))
        driver.controller(ControllerBytes.att(handle: Self.link, [0x12, 0x04, 0x00, 0x01, 0x00]))
        _ = driver.takeWritten()  // the Write Response: 1 of 64 buffers
        for i in 0..<70 { driver.perform(.notify(valueHandle: 3, value: [UInt8(i)], connection: Self.link)) }
        #expect(driver.takeATT().count == 63)
        driver.controller(ControllerBytes.completedPackets(handle: Self.link, count: 10))
        #expect(driver.takeATT().map { $0.last } == (63..<70).map { UInt8($0) })
    }

    /// `notify(…, connection:)` builds the L2CAP frame itself (the single-connection fast path);
    /// it must write exactly what the server path (`connection: nil`) writes and refuse the same.
    @Test("a notification to one connection writes what the all-connections path writes")
    func notifyOneMatchesServerPath() throws {
        func subscribed(mtu: UInt16?) throws -> EngineDriver {
            var driver = EngineDriver()
            _ = try driver.bringUpFromBumbleCapture()
            driver.engine.setDatabase(try TestDatabase.make())
            driver.controller(ControllerBytes.leConnectionComplete(handle: Self.link, central: false, peer: Self.central))
            if let mtu { driver.controller(ControllerBytes.att(handle: Self.link, [0x02] + ControllerBytes.le16(mtu))) }
            driver.controller(ControllerBytes.att(handle: Self.link, [0x12, 0x04, 0x00, 0x01, 0x00]))
            _ = driver.takeWritten()
            _ = driver.takeEvents()
            return driver
        }
        let long = (0..<120).map { UInt8($0) }
        // Default MTU 23: cut to 20 octets. MTU 100: cut to 97 and fragmented to the 27-octet buffers.
        for mtu: UInt16? in [nil, 100] {
            var all = try subscribed(mtu: mtu)
            var one = try subscribed(mtu: mtu)
            let viaServer = all.perform(.notify(valueHandle: TestDatabase.valueHandle, value: long, connection: nil))
            let direct = one.perform(.notify(valueHandle: TestDatabase.valueHandle, value: long, connection: Self.link))
            let written = one.takeWritten()
            #expect(written == all.takeWritten())
            #expect(written.count == (mtu == nil ? 1 : 4))
            #expect(one.result(direct) == all.result(viaServer))
            #expect(one.result(direct) == .success(.notified([Self.link])))
        }

        var driver = try subscribed(mtu: nil)
        // Refusals: not a characteristic value; a characteristic without notify.
        let unknown = driver.perform(.notify(valueHandle: 0x0050, value: [1], connection: Self.link))
        #expect(driver.result(unknown) == .failure(.server(.notCharacteristicValue(0x0050))))
        let readOnly = driver.perform(.notify(valueHandle: 6, value: [1], connection: Self.link))
        #expect(driver.result(readOnly) == .failure(.server(.notSupportedByCharacteristic(6))))
        // No such link, and a link subscribed to indications only: nothing sent.
        let noLink = driver.perform(.notify(valueHandle: TestDatabase.valueHandle, value: [1], connection: 0x0041))
        #expect(driver.result(noLink) == .success(.notified([])))
        driver.controller(ControllerBytes.att(handle: Self.link, [0x12, 0x04, 0x00, 0x02, 0x00]))
        _ = driver.takeWritten()
        let indicationsOnly = driver.perform(.notify(valueHandle: TestDatabase.valueHandle, value: [1], connection: Self.link))
        #expect(driver.result(indicationsOnly) == .success(.notified([])))
        #expect(driver.takeWritten().isEmpty)
        // After disconnection: nothing sent.
        driver.controller(ControllerBytes.att(handle: Self.link, [0x12, 0x04, 0x00, 0x01, 0x00]))
        driver.controller(ControllerBytes.disconnectionComplete(handle: Self.link, reason: 0x13))
        _ = driver.takeWritten()
        let gone = driver.perform(.notify(valueHandle: TestDatabase.valueHandle, value: [1], connection: Self.link))
        #expect(driver.result(gone) == .success(.notified([])))
        #expect(driver.takeWritten().isEmpty)
    }
}
