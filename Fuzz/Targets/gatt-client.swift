import BluewireATT
import BluewireCore
import BluewireGATT

// GATT client procedures against a hostile server: every answer to the procedure's requests comes from
// the input.
//
// Input: a procedure byte, an ATT_MTU byte (23 + value), then the server's answers, each a
// length-prefixed ATT PDU (an answer that does not decode ends the procedure, as the bearer would
// fail the request). Procedures: discover all primary services, discover a service by UUID, discover
// characteristics, find included services, discover descriptors, read long, reliable write, read by
// UUID, read multiple, subscribe, write.
//
// Invariants checked (never a trap):
// - every request is well-formed, fits in ATT_MTU and names a valid handle range (non-zero start, start
//   ≤ end): the client never asks the server something it must refuse;
// - discovery always moves forward (each request starts after the previous one) and long reads ask
//   for increasing offsets, so no server can keep a procedure looping; a procedure ends (finishes or
//   fails) within a bounded number of requests;
// - results are in handle order inside the range asked for, and a read long value is at most 512 octets.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let which = input.byte() % 11
    let mtu = 23 + Int(input.byte())
    let service = GATTService(handle: 0x0010, endHandle: 0x0030, uuid: BluetoothUUID(0x180F))
    let characteristic = GATTCharacteristic(handle: 0x0011, valueHandle: 0x0012, properties: [.read, .notify, .indicate],
                                            uuid: BluetoothUUID(0x2A19), endHandle: 0x0015)
    switch which {
    case 0:
        var p = DiscoverAllPrimaryServices()
        if let services = drive(&p, &input, mtu: mtu) { checkServices(services, 1, 0xFFFF) }
    case 1:
        var p = DiscoverPrimaryServiceByServiceUUID(uuid: BluetoothUUID(0x180D), startingHandle: 5)
        if let services = drive(&p, &input, mtu: mtu) { checkServices(services, 5, 0xFFFF) }
    case 2:
        var p = DiscoverCharacteristics(of: service)
        if let found = drive(&p, &input, mtu: mtu) {
            var previous = Int(service.handle) - 1
            for c in found {
                require(Int(c.handle) > previous && c.handle <= service.endHandle, "characteristic 0x\(c.handle) out of order or range")
                require(c.endHandle >= c.handle && c.endHandle <= service.endHandle, "characteristic end 0x\(c.endHandle)")
                previous = Int(c.handle)
            }
        }
    case 3:
        var p = FindIncludedServices(of: service)
        if let includes = drive(&p, &input, mtu: mtu) {
            var previous = Int(service.handle) - 1
            for i in includes {
                require(Int(i.declarationHandle) > previous && i.declarationHandle <= service.endHandle, "include out of order or range")
                previous = Int(i.declarationHandle)
            }
        }
    case 4:
        var p = DiscoverAllCharacteristicDescriptors(of: characteristic)
        if let descriptors = drive(&p, &input, mtu: mtu) {
            var previous = Int(characteristic.valueHandle)
            for d in descriptors {
                require(Int(d.handle) > previous && d.handle <= characteristic.endHandle, "descriptor 0x\(d.handle) out of order or range")
                previous = Int(d.handle)
            }
        }
    case 5:
        var p = ReadLongCharacteristicValues(handle: 0x0012, mtu: mtu)
        if let value = drive(&p, &input, mtu: mtu) { require(value.count <= 512, "read long returned \(value.count) octets") }
    case 6:
        var p = PreparedWrites.reliable([(0x0012, Array(repeating: 0xA5, count: 70)), (0x0014, [1, 2, 3])], mtu: mtu)
        _ = drive(&p, &input, mtu: mtu)
    case 7:
        var p = ReadUsingCharacteristicUUID(uuid: BluetoothUUID(0x2A19), startingHandle: 0x0010, endingHandle: 0x0030)
        if let values = drive(&p, &input, mtu: mtu) {
            var previous = 0x000F
            for v in values {
                require(Int(v.handle) > previous && v.handle <= 0x0030, "value of 0x\(v.handle) out of order or range")
                previous = Int(v.handle)
            }
        }
    case 8:
        var p = ReadMultipleCharacteristicValues(handles: [0x0012, 0x0014, 0x0016])
        _ = drive(&p, &input, mtu: mtu)
    case 9:
        var p = ConfigureClientCharacteristicConfiguration.subscribe(to: characteristic, indications: input.bool())
        if let handle = drive(&p, &input, mtu: mtu) {
            require(handle > characteristic.valueHandle && handle <= characteristic.endHandle, "CCCD 0x\(handle) outside the characteristic")
        }
    default:
        var p = WriteCharacteristicValue(handle: 0x0012, value: [1, 2, 3, 4], mtu: mtu)
        _ = drive(&p, &input, mtu: mtu)
    }
    return 0
}

func checkServices(_ services: [GATTService], _ start: UInt16, _ end: UInt16) {
    var previous = Int(start) - 1
    for s in services {
        require(Int(s.handle) > previous && s.handle <= end, "service 0x\(s.handle) out of order or range")
        require(s.endHandle >= s.handle && s.endHandle <= end, "service end 0x\(s.endHandle)")
        previous = Int(s.endHandle)
    }
}

/// Runs a procedure with the input's PDUs as the server's answers; the output if it finished.
func drive<P: GATTClientProcedure>(_ procedure: inout P, _ input: inout FuzzInput, mtu: Int) -> P.Output? {
    var step: GATTProcedureStep<P.Output>
    do { step = try procedure.start() } catch { return nil }
    var previous: ATTPDU?
    var requests = 0
    while true {
        guard case .request(let request) = step else {
            if case .finished(let output) = step { return output }
            return nil
        }
        requests += 1
        // 512-octet values, 23-octet MTU: the longest honest procedure needs a few hundred requests.
        require(requests <= 2_000, "procedure still running after \(requests) requests")
        checkRequest(request, after: previous, mtu: mtu)
        previous = request
        guard !input.isAtEnd, let answer = try? ATTPDU(decoding: input.lengthPrefixed()) else { return nil }
        do {
            step = try procedure.receive(answer)
        } catch {
            _ = error.description
            return nil
        }
    }
}

func checkRequest(_ request: ATTPDU, after previous: ATTPDU?, mtu: Int) {
    let bytes = request.encode()
    require(bytes.count <= mtu, "request of \(bytes.count) octets with ATT_MTU \(mtu): \(request)")
    require((try? ATTPDU(decoding: bytes)) == request, "request does not round-trip: \(request)")
    func range(_ pdu: ATTPDU) -> (UInt16, UInt16)? {
        switch pdu {
        case .findInformationRequest(let s, let e), .findByTypeValueRequest(let s, let e, _, _),
             .readByTypeRequest(let s, let e, _), .readByGroupTypeRequest(let s, let e, _):
            return (s, e)
        default:
            return nil
        }
    }
    if let (start, end) = range(request) {
        require(start != 0 && start <= end, "invalid handle range 0x\(start)…0x\(end)")
        if let previous, previous.opcode == request.opcode, let (before, _) = range(previous) {
            require(start > before, "discovery did not move forward: 0x\(before) then 0x\(start)")
        }
    }
    if case .readBlobRequest(_, let offset) = request {
        if case .readBlobRequest(_, let before)? = previous {
            require(offset > before, "read blob offsets \(before) then \(offset)")
        }
        require(offset <= 512, "read blob at offset \(offset)")
    }
}
