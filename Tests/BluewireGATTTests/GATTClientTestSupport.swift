import BluewireATT
import BluewireCore
import BluewireGATT
import Testing

/// One scripted ATT exchange: the request the procedure must send (hex) and the answer injected back.
struct Exchange {
    var request: String
    var response: String
    init(_ request: String, _ response: String) {
        self.request = request
        self.response = response
    }
}

/// Bytes from hex text; records an issue (and returns []) for malformed hex in a test vector.
func bytes(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> [UInt8] {
    guard let parsed = parseHex(text) else {
        Issue.record("bad hex in test vector: \(text)", sourceLocation: sourceLocation)
        return []
    }
    return parsed
}

/// Drives `procedure` through `script` the way BlueZ's gatt-client unit tests do: every request it
/// emits must equal the scripted one byte for byte, and the scripted response is decoded and fed back.
/// Returns the procedure's result, or the error it threw; records an issue if it wanted fewer or more
/// exchanges than scripted.
func drive<P: GATTClientProcedure>(
    _ procedure: P, _ script: [Exchange], sourceLocation: SourceLocation = #_sourceLocation
) -> Result<P.Output, GATTClientError> {
    var procedure = procedure
    var step: GATTProcedureStep<P.Output>
    do {
        step = try procedure.start()
    } catch {
        if !script.isEmpty { Issue.record("failed at start with \(error)", sourceLocation: sourceLocation) }
        return .failure(error)
    }
    for (index, exchange) in script.enumerated() {
        guard case .request(let pdu) = step else {
            Issue.record("finished after \(index) exchange(s); script has \(script.count)", sourceLocation: sourceLocation)
            return step.output.map { .success($0) } ?? .failure(.invalidHandleRange(start: 0, end: 0))
        }
        let sent = hexString(pdu.encode())
        #expect(sent == hexString(bytes(exchange.request)), "request #\(index + 1)", sourceLocation: sourceLocation)
        let answer: ATTPDU
        do {
            answer = try ATTPDU(decoding: bytes(exchange.response))
        } catch {
            Issue.record("scripted response #\(index + 1) does not decode: \(error)", sourceLocation: sourceLocation)
            return .failure(.malformedResponse(error))
        }
        do {
            step = try procedure.receive(answer)
        } catch {
            if index != script.count - 1 {
                Issue.record("threw \(error) after exchange #\(index + 1) of \(script.count)", sourceLocation: sourceLocation)
            }
            return .failure(error)
        }
    }
    switch step {
    case .finished(let output):
        return .success(output)
    case .request(let pdu):
        Issue.record("procedure wants another exchange: \(hexString(pdu.encode()))", sourceLocation: sourceLocation)
        return .failure(.unexpectedResponse(request: pdu.opcode, received: pdu.opcode))
    }
}

extension GATTProcedureStep {
    var output: Output? {
        if case .finished(let output) = self { return output }
        return nil
    }
}

extension Result {
    /// The success value, or nil (the tests then say what was expected).
    var value: Success? { try? get() }
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// `count` bytes counting up from `start` (wrapping), for long values whose parts are easy to check.
func ramp(_ count: Int, from start: Int = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: start + $0) }
}

/// The Nordic UART Service UUID 6E400001-B5A3-F393-E0A9-E50E24DCCA9E, and its little-endian wire form.
let nordicUART = BluetoothUUID(high: 0x6E40_0001_B5A3_F393, low: 0xE0A9_E50E_24DC_CA9E)
let nordicUARTWire = "9ecadc240ee5a9e093f3a3b50100406e"
