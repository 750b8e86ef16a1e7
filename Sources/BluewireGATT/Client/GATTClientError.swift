import BluewireATT
import BluewireCore

/// Why a GATT client procedure failed.
public enum GATTClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The server answered `requestOpcode` on `handle` with an Error Response (Core Vol 3 Part F
    /// §3.4.1.1). `error.name` is the specification's name of the error code.
    case errorResponse(ATTErrorCode, requestOpcode: ATTOpcode, handle: UInt16)
    /// The server answered `request` with a PDU that is not its response.
    case unexpectedResponse(request: ATTOpcode, received: ATTOpcode)
    /// A response is well-formed ATT but its content breaks a GATT rule (a characteristic declaration
    /// of the wrong length, a UUID of 3 octets, ...).
    case malformedResponse(DecodeError)
    /// A discovery response did not move forward (a handle at or below the last one seen): continuing
    /// would loop forever, so the procedure stops (Core Vol 3 Part G §4.4.1 expects increasing handles).
    case handlesNotIncreasing(request: ATTOpcode, handle: UInt16)
    /// A Prepare Write Response did not echo the handle, offset and value sent; the queued writes were
    /// cancelled with Execute Write (Core Vol 3 Part G §4.9.4).
    case preparedWriteMismatch(handle: UInt16, offset: UInt16)
    /// The value does not fit the PDU at the current ATT_MTU (use the long procedure instead).
    case valueTooLong(length: Int, maximum: Int)
    /// The handle range is empty or starts at the reserved handle 0x0000.
    case invalidHandleRange(start: UInt16, end: UInt16)
    /// The characteristic has no descriptor of this type (a subscription needs its CCCD, §3.3.3.3).
    case descriptorNotFound(BluetoothUUID, characteristicHandle: UInt16)
    /// The characteristic's properties do not allow the operation (e.g. subscribing to notifications
    /// on a characteristic without the Notify property, §3.3.1.1).
    case propertyNotSupported(CharacteristicProperties, characteristicHandle: UInt16)

    /// The Error Response's code, if this is one.
    @inlinable
    public var attErrorCode: ATTErrorCode? {
        if case .errorResponse(let code, _, _) = self { return code }
        return nil
    }

    /// Whether the server refused for lack of security on the link: pairing or encrypting and trying
    /// again may succeed (Core Vol 3 Part C §10.3.2).
    @inlinable
    public var isInsufficientSecurity: Bool {
        guard let code = attErrorCode else { return false }
        return code == .insufficientAuthentication || code == .insufficientEncryption
            || code == .insufficientAuthorization || code == .encryptionKeySizeTooShort
    }

    public var description: String {
        switch self {
        case .errorResponse(let code, let request, let handle):
            return "\(code.name) (0x\(hex(code.rawValue, width: 2))) answering \(request) on handle 0x\(hex(handle, width: 4))"
        case .unexpectedResponse(let request, let received):
            return "\(received) received in answer to \(request)"
        case .malformedResponse(let error):
            return "malformed response: \(error)"
        case .handlesNotIncreasing(let request, let handle):
            return "\(request): server returned handle 0x\(hex(handle, width: 4)), which does not advance"
        case .preparedWriteMismatch(let handle, let offset):
            return "Prepare Write Response for handle 0x\(hex(handle, width: 4)) offset \(offset) did not echo the request"
        case .valueTooLong(let length, let maximum):
            return "value of \(length) octets exceeds \(maximum) at this ATT_MTU"
        case .invalidHandleRange(let start, let end):
            return "invalid handle range 0x\(hex(start, width: 4))-0x\(hex(end, width: 4))"
        case .descriptorNotFound(let uuid, let handle):
            return "characteristic 0x\(hex(handle, width: 4)) has no \(uuid) descriptor"
        case .propertyNotSupported(let properties, let handle):
            return "characteristic 0x\(hex(handle, width: 4)) lacks property 0x\(hex(properties.rawValue, width: 2))"
        }
    }

    /// The error for an answer that is not the response `request` expects: an Error Response becomes
    /// `.errorResponse`, anything else `.unexpectedResponse`.
    @inlinable
    public static func unexpected(_ response: ATTPDU, to request: ATTOpcode) -> GATTClientError {
        if case .errorResponse(let requestOpcode, let handle, let code) = response {
            return .errorResponse(code, requestOpcode: requestOpcode, handle: handle)
        }
        return .unexpectedResponse(request: request, received: response.opcode)
    }
}
