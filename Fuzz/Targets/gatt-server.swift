import BluewireATT
import BluewireCore
import BluewireGATT

// The GATT server against a realistic database, fed the PDUs of hostile clients.
//
// Input: one configuration byte (bits 0–1 security level of connection A, bits 2–3 of connection B,
// bit 4 a small server configuration), then operations, each an operation byte and its operands:
//   0–4 a client PDU: a connection byte (bit 0: A or B) and a length-prefixed PDU
//   5 notify / 6 indicate: a characteristic byte and a length-prefixed value
//   7 connection B disconnects and reconnects
// (operation bytes are taken modulo 8).
//
// Invariants checked (never a trap):
// - every request (and every unknown request opcode) gets exactly one PDU back: its response or an
//   Error Response naming it; commands, notifications and responses from the client get none;
// - every PDU the server returns decodes and fits in the connection's ATT_MTU;
// - answers agree with the database: Read/Read Blob of a plainly readable cached value return its
//   bytes from the offset, cut to ATT_MTU − 1; Prepare Write echoes the request; discovery lists are
//   in handle order within the requested range;
// - state stays bounded: prepare queue and indication queue within the configuration, two
//   connections at most, events taken after every step.

enum Fixture {
    static let custom = BluetoothUUID(high: 0x6E40_0001_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
    static let long = BluetoothUUID(high: 0x6E40_0002_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)

    /// Generic Access, Generic Attribute with Service Changed, Battery with a notify characteristic and a
    /// user description, a 128-bit service with a 300-byte value and every permission kind, dynamic
    /// values with and without handlers, a secondary service included by another.
    static let database: GATTDatabase = {
        var b = GATTDatabaseBuilder()
        do {
            let info = try b.addService(BluetoothUUID(0x180A), kind: .secondary)
            try b.addCharacteristic(BluetoothUUID(0x2A24), properties: [.read], permissions: [.read], value: .cached(Array("Model".utf8)))
            try b.addService(.genericAccess)
            try b.addCharacteristic(.deviceName, properties: [.read, .write], permissions: [.read, .write], value: .cached(Array("Bluewire".utf8)))
            try b.addCharacteristic(.appearance, properties: [.read], permissions: [.read], value: .cached([0x41, 0x03]))
            try b.addService(.genericAttribute)
            try b.addCharacteristic(.serviceChanged, properties: [.indicate], permissions: [], value: .cached([]))
            try b.skipHandles(to: 0x0010)
            try b.addService(BluetoothUUID(0x180F))
            try b.addIncludedService(b.addedServices.first { $0.startHandle == info.startHandle } ?? info)
            try b.addCharacteristic(BluetoothUUID(0x2A19), properties: [.read, .notify], permissions: [.read], value: .cached([100]))
            try b.addDescriptor(.characteristicUserDescription, permissions: [.read], value: .cached(Array("Battery".utf8)))
            try b.addService(custom)
            try b.addCharacteristic(long, properties: [.read, .write, .writeWithoutResponse, .notify, .indicate],
                                    permissions: [.read, .write], value: .cached((0..<300).map { UInt8(truncatingIfNeeded: $0) }))
            try b.addCharacteristic(BluetoothUUID(0xFF01), properties: [.read, .write, .indicate],
                                    permissions: [.readEncrypted, .writeEncrypted], value: .cached([0xE0]))
            try b.addCharacteristic(BluetoothUUID(0xFF02), properties: [.read, .write],
                                    permissions: [.readAuthenticated, .writeAuthenticated], value: .cached([0xA0]))
            try b.addCharacteristic(BluetoothUUID(0xFF03), properties: [.write], permissions: [.write], value: .cached([0x00]))
            try b.addCharacteristic(
                BluetoothUUID(0xFF04), properties: [.read, .write, .notify], permissions: [.read, .write],
                value: .dynamic(GATTDynamicValue(
                    read: { request throws(GATTAttributeError) in
                        if request.connection == 0x41 && request.offset == 7 { throw GATTAttributeError(.unlikelyError) }
                        return try request.part(of: Array(repeating: UInt8(truncatingIfNeeded: request.connection), count: 600))
                    },
                    write: { request throws(GATTAttributeError) in
                        if request.value.first == 0xEE { throw GATTAttributeError(.applicationError(0x80)) }
                    })))
            try b.addCharacteristic(BluetoothUUID(0xFF05), properties: [.read, .write], permissions: [.read, .write],
                                    value: .dynamic(GATTDynamicValue()))
        } catch {
            fatalError("fixture database: \(error)")
        }
        return b.build()
    }()

    static let characteristics = database.characteristics
}

let connectionA: UInt16 = 0x0040
let connectionB: UInt16 = 0x0041

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let config = input.byte()
    let configuration = config & 0x10 == 0
        ? GATTServerConfiguration()
        : GATTServerConfiguration(serverMTU: 64, maximumPreparedWrites: 3, maximumPreparedWriteBytes: 40,
                                  maximumQueuedIndications: 2, maximumPendingEvents: 4)
    var server = GATTServer(database: Fixture.database, configuration: configuration)
    let levels: [GATTSecurityLevel] = [.none, .encrypted, .authenticated, .none]
    server.connect(connectionA, securityLevel: levels[Int(config & 3)])
    server.connect(connectionB, securityLevel: levels[Int((config >> 2) & 3)])
    var steps = 0
    while !input.isAtEnd && steps < 256 {
        steps += 1
        let op = input.byte() % 8
        switch op {
        case 0...4:
            let connection = input.byte() & 1 == 0 ? connectionA : connectionB
            let pdu = input.lengthPrefixed()
            checkRequest(&server, pdu, connection)
        case 5, 6:
            let characteristic = Fixture.characteristics[Int(input.byte()) % Fixture.characteristics.count]
            let value = Array(input.lengthPrefixed())
            let result = op == 5
                ? Result { () throws(GATTServerError) in try server.notify(handle: characteristic.valueHandle, value: value) }
                : Result { () throws(GATTServerError) in try server.indicate(handle: characteristic.valueHandle, value: value) }
            if case .success(let pdus) = result {
                for pdu in pdus { checkOutbound(server, pdu, expected: op == 5 ? .handleValueNotification : .handleValueIndication) }
            }
        default:
            server.disconnect(connectionB)
            require(server.preparedWriteCount(for: connectionB) == 0 && !server.indicationOutstanding(on: connectionB),
                    "state left after disconnection")
            server.connect(connectionB)
        }
        _ = server.takeEvents()
        for connection in [connectionA, connectionB] {
            require(server.preparedWriteCount(for: connection) <= configuration.maximumPreparedWrites, "prepare queue over its bound")
            require(server.queuedIndicationCount(for: connection) <= configuration.maximumQueuedIndications, "indication queue over its bound")
            let mtu = server.mtu(for: connection)
            require(mtu >= 23 && mtu <= configuration.serverMTU, "ATT_MTU \(mtu)")
        }
        require(server.connectionCount <= 2, "\(server.connectionCount) connections from two handles")
        require(server.database.attributes.count == Fixture.database.attributes.count, "the attribute table changed shape")
    }
    return 0
}

let requestOpcodes: Set<UInt8> = [0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20]
let definedOpcodes: Set<UInt8> = Set(ATTOpcode.allKnown.map(\.rawValue))

func checkOutbound(_ server: GATTServer, _ pdu: GATTOutboundPDU, expected: ATTOpcode) {
    require(pdu.bytes.count <= server.mtu(for: pdu.connection), "outbound PDU of \(pdu.bytes.count) octets over ATT_MTU")
    guard let decoded = try? ATTPDU(decoding: pdu.bytes) else {
        require(false, "outbound PDU does not decode")
        return
    }
    require(decoded.opcode == expected, "outbound \(decoded.opcode), expected \(expected)")
}

func checkRequest(_ server: inout GATTServer, _ pdu: ArraySlice<UInt8>, _ connection: UInt16) {
    let mtuBefore = server.mtu(for: connection)
    let response = server.handle(pdu, from: connection)
    guard let first = pdu.first else {
        require(response == nil, "answered an empty PDU")
        return
    }
    let isRequest = requestOpcodes.contains(first) || (!definedOpcodes.contains(first) && first & 0x40 == 0)
    if first == ATTOpcode.handleValueConfirmation.rawValue {
        if let response {
            checkOutbound(server, GATTOutboundPDU(connection: connection, bytes: response), expected: .handleValueIndication)
        }
        return
    }
    guard isRequest else {
        require(response == nil, "answered non-request 0x\(first) with \(String(describing: response))")
        return
    }
    guard let response else {
        require(false, "request 0x\(first) got no answer")
        return
    }
    require(response.count <= mtuBefore, "response of \(response.count) octets with ATT_MTU \(mtuBefore)")
    guard let answer = try? ATTPDU(decoding: response) else {
        require(false, "response \(response) does not decode")
        return
    }
    if case .errorResponse(let opcode, _, _) = answer {
        require(opcode.rawValue == first, "Error Response names 0x\(opcode.rawValue), request was 0x\(first)")
        return
    }
    require(answer.opcode.rawValue == first &+ 1, "answer \(answer.opcode) to request 0x\(first)")
    guard let request = try? ATTPDU(decoding: pdu) else {
        require(false, "a malformed request got a success response")
        return
    }
    checkAnswer(server, request, answer, connection, mtu: mtuBefore)
}

func plainlyReadable(_ handle: UInt16) -> [UInt8]? {
    guard let attribute = Fixture.database[handle: handle], attribute.permissions == [.read] || attribute.permissions == [.read, .write],
          attribute.type != .clientCharacteristicConfiguration else { return nil }
    return attribute.cachedValue
}

func checkAnswer(_ server: GATTServer, _ request: ATTPDU, _ answer: ATTPDU, _ connection: UInt16, mtu: Int) {
    switch (request, answer) {
    case (.readRequest(let handle), .readResponse(let value)):
        // Attributes that clients can write (Device Name, the long value) may differ from the fixture now.
        if let current = server.database[handle: handle]?.cachedValue, plainlyReadable(handle) != nil {
            require(Array(value) == Array(current.prefix(mtu - 1)), "Read of 0x\(handle) returned other bytes")
        }
    case (.readBlobRequest(let handle, let offset), .readBlobResponse(let value)):
        if let current = server.database[handle: handle]?.cachedValue, plainlyReadable(handle) != nil {
            require(Int(offset) <= current.count, "Read Blob past the end succeeded")
            require(Array(value) == Array(current[Int(offset)...].prefix(mtu - 1)), "Read Blob of 0x\(handle) returned other bytes")
        }
    case (.prepareWriteRequest(let handle, let offset, let part), .prepareWriteResponse(let h, let o, let p)):
        require(h == handle && o == offset && Array(p) == Array(part), "Prepare Write Response does not echo the request")
    case (.readByGroupTypeRequest(let start, let end, _), .readByGroupTypeResponse(let response)):
        var previous = 0
        for entry in response.entries {
            require(Int(entry.handle) > previous && entry.handle >= start && entry.handle <= end, "group 0x\(entry.handle) out of order or range")
            require(entry.endGroupHandle >= entry.handle, "group ends before it starts")
            previous = Int(entry.endGroupHandle)
        }
    case (.readByTypeRequest(let start, let end, _), .readByTypeResponse(let response)):
        var previous = 0
        for entry in response.entries {
            require(Int(entry.handle) > previous && entry.handle >= start && entry.handle <= end, "attribute 0x\(entry.handle) out of order or range")
            previous = Int(entry.handle)
        }
    case (.findInformationRequest(let start, let end), .findInformationResponse(let response)):
        var previous = 0
        for entry in response.entries {
            require(Int(entry.handle) > previous && entry.handle >= start && entry.handle <= end, "information 0x\(entry.handle) out of order or range")
            require(Fixture.database[handle: entry.handle]?.type == entry.type, "Find Information type differs from the table")
            previous = Int(entry.handle)
        }
    case (.findByTypeValueRequest(let start, let end, _, _), .findByTypeValueResponse(let response)):
        var previous = 0
        for entry in response.entries {
            require(Int(entry.foundAttributeHandle) > previous && entry.foundAttributeHandle >= start && entry.foundAttributeHandle <= end,
                    "found 0x\(entry.foundAttributeHandle) out of order or range")
            require(entry.groupEndHandle >= entry.foundAttributeHandle, "group ends before it starts")
            previous = Int(entry.groupEndHandle)
        }
    case (.exchangeMTURequest, .exchangeMTUResponse(let serverMTU)):
        require(Int(serverMTU) == server.configuration.serverMTU, "Exchange MTU Response offers \(serverMTU)")
    default:
        break
    }
}
