import BluewireCore

/// An Attribute Protocol opcode (Core Vol 3 Part F §3.3.1, Table 3.1 in §3.4.8).
///
/// The opcode byte is split into a 6-bit method, a command flag (bit 6) and an authentication
/// signature flag (bit 7). It is a struct, not an enum, because a peer may send any byte: a server must
/// answer an unknown *request* with Request Not Supported and silently ignore an unknown *command*
/// (§3.4.1.1, §3.3), so the value has to survive decoding.
public struct ATTOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8

    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    /// Bits 5..0: which operation this is.
    @inlinable public var method: UInt8 { rawValue & 0x3F }
    /// Bit 6: set for commands, which get no response (Write Command, Signed Write Command).
    @inlinable public var isCommand: Bool { rawValue & 0x40 != 0 }
    /// Bit 7: set when the PDU ends with a 12-byte authentication signature (Signed Write Command).
    @inlinable public var hasAuthenticationSignature: Bool { rawValue & 0x80 != 0 }

    public static let errorResponse = ATTOpcode(0x01)
    public static let exchangeMTURequest = ATTOpcode(0x02)
    public static let exchangeMTUResponse = ATTOpcode(0x03)
    public static let findInformationRequest = ATTOpcode(0x04)
    public static let findInformationResponse = ATTOpcode(0x05)
    public static let findByTypeValueRequest = ATTOpcode(0x06)
    public static let findByTypeValueResponse = ATTOpcode(0x07)
    public static let readByTypeRequest = ATTOpcode(0x08)
    public static let readByTypeResponse = ATTOpcode(0x09)
    public static let readRequest = ATTOpcode(0x0A)
    public static let readResponse = ATTOpcode(0x0B)
    public static let readBlobRequest = ATTOpcode(0x0C)
    public static let readBlobResponse = ATTOpcode(0x0D)
    public static let readMultipleRequest = ATTOpcode(0x0E)
    public static let readMultipleResponse = ATTOpcode(0x0F)
    public static let readByGroupTypeRequest = ATTOpcode(0x10)
    public static let readByGroupTypeResponse = ATTOpcode(0x11)
    public static let writeRequest = ATTOpcode(0x12)
    public static let writeResponse = ATTOpcode(0x13)
    public static let prepareWriteRequest = ATTOpcode(0x16)
    public static let prepareWriteResponse = ATTOpcode(0x17)
    public static let executeWriteRequest = ATTOpcode(0x18)
    public static let executeWriteResponse = ATTOpcode(0x19)
    public static let readMultipleVariableRequest = ATTOpcode(0x20)
    public static let readMultipleVariableResponse = ATTOpcode(0x21)
    public static let multipleHandleValueNotification = ATTOpcode(0x23)
    public static let handleValueNotification = ATTOpcode(0x1B)
    public static let handleValueIndication = ATTOpcode(0x1D)
    public static let handleValueConfirmation = ATTOpcode(0x1E)
    public static let writeCommand = ATTOpcode(0x52)
    public static let signedWriteCommand = ATTOpcode(0xD2)

    /// Every opcode the specification defines, in numeric order.
    public static let allKnown: [ATTOpcode] = [
        .errorResponse, .exchangeMTURequest, .exchangeMTUResponse, .findInformationRequest,
        .findInformationResponse, .findByTypeValueRequest, .findByTypeValueResponse, .readByTypeRequest,
        .readByTypeResponse, .readRequest, .readResponse, .readBlobRequest, .readBlobResponse,
        .readMultipleRequest, .readMultipleResponse, .readByGroupTypeRequest, .readByGroupTypeResponse,
        .writeRequest, .writeResponse, .prepareWriteRequest, .prepareWriteResponse, .executeWriteRequest,
        .executeWriteResponse, .handleValueNotification, .handleValueIndication, .handleValueConfirmation,
        .readMultipleVariableRequest, .readMultipleVariableResponse, .multipleHandleValueNotification,
        .writeCommand, .signedWriteCommand,
    ]

    /// How the PDU takes part in the protocol (§3.3: "request, response, command, notification,
    /// indication, confirmation"); nil for opcodes the specification does not define.
    public enum Kind: Sendable, Hashable {
        case request, response, command, notification, indication, confirmation
    }

    /// The method type of a defined opcode; nil for unknown ones.
    public var kind: Kind? {
        switch self {
        case .exchangeMTURequest, .findInformationRequest, .findByTypeValueRequest, .readByTypeRequest,
             .readRequest, .readBlobRequest, .readMultipleRequest, .readByGroupTypeRequest, .writeRequest,
             .prepareWriteRequest, .executeWriteRequest, .readMultipleVariableRequest:
            return .request
        case .errorResponse, .exchangeMTUResponse, .findInformationResponse, .findByTypeValueResponse,
             .readByTypeResponse, .readResponse, .readBlobResponse, .readMultipleResponse,
             .readByGroupTypeResponse, .writeResponse, .prepareWriteResponse, .executeWriteResponse,
             .readMultipleVariableResponse:
            return .response
        case .writeCommand, .signedWriteCommand: return .command
        case .handleValueNotification, .multipleHandleValueNotification: return .notification
        case .handleValueIndication: return .indication
        case .handleValueConfirmation: return .confirmation
        default: return nil
        }
    }

    /// The response opcode that completes this request (§3.4); nil if this is not a request.
    /// An Error Response may complete any request instead.
    public var responseOpcode: ATTOpcode? {
        guard kind == .request else { return nil }
        return ATTOpcode(rawValue &+ 1)
    }

    /// The request this response answers; nil if this is not a response or is the Error Response.
    public var requestOpcode: ATTOpcode? {
        guard kind == .response, self != .errorResponse else { return nil }
        return ATTOpcode(rawValue &- 1)
    }

    /// The specification's name, e.g. "Read By Group Type Request"; nil for an unknown opcode.
    public var name: String? {
        switch rawValue {
        case 0x01: return "Error Response"
        case 0x02: return "Exchange MTU Request"
        case 0x03: return "Exchange MTU Response"
        case 0x04: return "Find Information Request"
        case 0x05: return "Find Information Response"
        case 0x06: return "Find By Type Value Request"
        case 0x07: return "Find By Type Value Response"
        case 0x08: return "Read By Type Request"
        case 0x09: return "Read By Type Response"
        case 0x0A: return "Read Request"
        case 0x0B: return "Read Response"
        case 0x0C: return "Read Blob Request"
        case 0x0D: return "Read Blob Response"
        case 0x0E: return "Read Multiple Request"
        case 0x0F: return "Read Multiple Response"
        case 0x10: return "Read By Group Type Request"
        case 0x11: return "Read By Group Type Response"
        case 0x12: return "Write Request"
        case 0x13: return "Write Response"
        case 0x16: return "Prepare Write Request"
        case 0x17: return "Prepare Write Response"
        case 0x18: return "Execute Write Request"
        case 0x19: return "Execute Write Response"
        case 0x1B: return "Handle Value Notification"
        case 0x1D: return "Handle Value Indication"
        case 0x1E: return "Handle Value Confirmation"
        case 0x20: return "Read Multiple Variable Request"
        case 0x21: return "Read Multiple Variable Response"
        case 0x23: return "Multiple Handle Value Notification"
        case 0x52: return "Write Command"
        case 0xD2: return "Signed Write Command"
        default: return nil
        }
    }

    public var description: String { name ?? "Unknown (0x\(hex(rawValue, width: 2)))" }
}
