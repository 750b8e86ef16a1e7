import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHostEngine
import BluewireL2CAP
import BluewireTesting
import Testing

/// `GATTClientRequest.attRequest` and `.attCommand` on an Enhanced ATT bearer (`.gattOnEATT`, Core
/// Vol 3 Part G §5.3.2), between two engines on the virtual link: the PDU goes on that bearer, its
/// ATT_MTU is the channel's, and the same refusals apply.
@Suite("Host engine: application-built ATT PDUs on an EATT bearer")
struct EngineATTPDUEATTTests {
    @Test("a Read Request on an EATT bearer completes with the Read Response; a Write Command goes; a response PDU is refused")
    func onEATTBearer() throws {
        var scene = try EnginesOnVirtualLink(timing: .radio())
        var builder = GATTDatabaseBuilder()
        try builder.addService(BluetoothUUID(0xFE30))
        let value = (0..<100).map { UInt8($0) }
        let characteristic = try builder.addCharacteristic(
            BluetoothUUID(0xFE31), properties: [.read, .writeWithoutResponse], permissions: [.read, .write], value: .dynamic(.stored(value)))
        scene.peripheral.engine.setDatabase(builder.build())
        let parameters = CreditBasedChannelParameters(mtu: 247, mps: 247, initialCredits: 10)
        let register = scene.perform(.registerServer(spsm: .eatt, parameters: parameters, security: .none), on: 1)
        #expect(scene.peripheral.result(register) == .success(.done))
        let handle = try scene.connect()
        let open = scene.perform(.openEnhancedChannels(connection: handle, spsm: .eatt, count: 1, parameters: parameters), on: 0)
        try scene.run(until: { $0.central.result(open) != nil }, within: .seconds(2))
        guard case .success(.channelsOpened(let bearers))? = scene.central.result(open), let cid = bearers.first?.cid else {
            Issue.record("open: \(String(describing: scene.central.result(open)))")
            return
        }
        // 100 octets fit one Read Response at the bearer's ATT_MTU of 247 (the ATT bearer's is 23 here).
        let read = scene.perform(.gattOnEATT(connection: handle, cid: cid, .attRequest(.readRequest(handle: characteristic.valueHandle))), on: 0)
        try scene.run(until: { $0.central.result(read) != nil }, within: .seconds(2))
        #expect(scene.central.result(read) == .success(.attResponse(.readResponse(value: value[...]))))

        let command = scene.perform(
            .gattOnEATT(connection: handle, cid: cid, .attCommand(.writeCommand(handle: characteristic.valueHandle, value: [9]))), on: 0)
        #expect(scene.central.result(command) == .success(.done))
        let readBack = scene.perform(.gattOnEATT(connection: handle, cid: cid, .attRequest(.readRequest(handle: characteristic.valueHandle))), on: 0)
        try scene.run(until: { $0.central.result(readBack) != nil }, within: .seconds(2))
        #expect(scene.central.result(readBack) == .success(.attResponse(.readResponse(value: [9]))))

        let refused = scene.perform(.gattOnEATT(connection: handle, cid: cid, .attRequest(.readResponse(value: [1]))), on: 0)
        #expect(scene.central.result(refused) == .failure(.att(.notARequest(.readResponse))))
        let notCommand = scene.perform(.gattOnEATT(connection: handle, cid: cid, .attCommand(.readRequest(handle: 1))), on: 0)
        #expect(scene.central.result(notCommand) == .failure(.att(.notACommand(.readRequest))))
    }
}

/// The client's step-by-step procedures on an Enhanced ATT bearer: at the bearer's ATT_MTU (Core Vol 3
/// Part G §5.3.1), with the ATT bearer's left at 23.
@Suite("Host engine: step-by-step discovery, strict Read Multiple and reliable writes on an EATT bearer")
struct EngineClientExtrasEATTTests {
    @Test("characteristics by UUID make the handles known; Read Multiple Variable Length and a reliable write go whole at ATT_MTU 247")
    func onEATTBearer() throws {
        var scene = try EnginesOnVirtualLink(timing: .radio())
        var builder = GATTDatabaseBuilder()
        let service = try builder.addService(BluetoothUUID(0xFE30))
        let value = (0..<100).map { UInt8($0) }
        let long = try builder.addCharacteristic(
            BluetoothUUID(0xFE31), properties: [.read, .write], permissions: [.read, .write], value: .dynamic(.stored(value)))
        let short = try builder.addCharacteristic(BluetoothUUID(0xFE32), properties: [.read], permissions: [.read], value: .cached([7]))
        scene.peripheral.engine.setDatabase(builder.build())
        let parameters = CreditBasedChannelParameters(mtu: 247, mps: 247, initialCredits: 10)
        _ = scene.perform(.registerServer(spsm: .eatt, parameters: parameters, security: .none), on: 1)
        let handle = try scene.connect()
        let open = scene.perform(.openEnhancedChannels(connection: handle, spsm: .eatt, count: 1, parameters: parameters), on: 0)
        try scene.run(until: { $0.central.result(open) != nil }, within: .seconds(2))
        guard case .success(.channelsOpened(let bearers))? = scene.central.result(open), let cid = bearers.first?.cid else {
            Issue.record("open: \(String(describing: scene.central.result(open)))")
            return
        }
        func run(_ request: GATTClientRequest) throws -> Result<HostCompletion, HostEngineError>? {
            let id = scene.perform(.gattOnEATT(connection: handle, cid: cid, request), on: 0)
            try scene.run(until: { $0.central.result(id) != nil }, within: .seconds(2))
            return scene.central.result(id)
        }
        let variable = GATTClientRequest.readMultipleVariableLength(handles: [long.valueHandle, short.valueHandle])
        #expect(try run(variable) == .failure(.refused(state: .connected(.idle), trigger: .read)), "nothing is known yet")

        let definition = GATTService(handle: service.startHandle, endHandle: short.valueHandle, uuid: BluetoothUUID(0xFE30))
        guard case .success(.characteristics(let found))? = try run(.discoverCharacteristics(definition, uuid: BluetoothUUID(0xFE31))) else {
            Issue.record("discovery failed")
            return
        }
        #expect(found.map(\.valueHandle) == [long.valueHandle])
        #expect(scene.central.engine.state(of: EnginesOnVirtualLink.peripheralAddress) == .connected(.discoveredCharacteristic))

        // 100 octets come whole in one response at 247 (the ATT bearer's 23 would cut them at 17).
        #expect(try run(variable) == .success(.values([value, [7]])))
        let written = (0..<120).map { UInt8(0xFF - $0) }
        #expect(try run(.reliableWrite([GATTHandleValue(handle: long.valueHandle, value: written)])) == .success(.done))
        #expect(try run(.readLong(handle: long.valueHandle)) == .success(.value(written)))
    }
}
