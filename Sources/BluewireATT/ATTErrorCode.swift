import BluewireCore

/// An ATT Error Response error code (Core Vol 3 Part F §3.4.1.1, Table 3.4), plus the ranges the
/// specification hands to applications (0x80–0x9F) and to the Core Specification Supplement's
/// common profile and service errors (CSS Part B §1.2, 0xE0–0xFF).
///
/// A struct rather than an enum: any byte may arrive from a peer, and application errors are chosen
/// by the profile, so every value must be representable.
public struct ATTErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8

    @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue }
    @inlinable public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    /// The attribute handle given was not valid on this server.
    public static let invalidHandle = ATTErrorCode(0x01)
    /// The attribute cannot be read.
    public static let readNotPermitted = ATTErrorCode(0x02)
    /// The attribute cannot be written.
    public static let writeNotPermitted = ATTErrorCode(0x03)
    /// The attribute PDU was invalid.
    public static let invalidPDU = ATTErrorCode(0x04)
    /// The attribute requires authentication before it can be read or written.
    public static let insufficientAuthentication = ATTErrorCode(0x05)
    /// The server does not support the request received from the client.
    public static let requestNotSupported = ATTErrorCode(0x06)
    /// The offset specified was past the end of the attribute.
    public static let invalidOffset = ATTErrorCode(0x07)
    /// The attribute requires authorization before it can be read or written.
    public static let insufficientAuthorization = ATTErrorCode(0x08)
    /// Too many prepare writes have been queued.
    public static let prepareQueueFull = ATTErrorCode(0x09)
    /// No attribute found within the given attribute handle range.
    public static let attributeNotFound = ATTErrorCode(0x0A)
    /// The attribute cannot be read using the Read Blob Request.
    public static let attributeNotLong = ATTErrorCode(0x0B)
    /// The Encryption Key Size used for encrypting this link is too short.
    public static let encryptionKeySizeTooShort = ATTErrorCode(0x0C)
    /// The attribute value length is invalid for the operation.
    public static let invalidAttributeValueLength = ATTErrorCode(0x0D)
    /// The request has encountered an unlikely error and could not be completed.
    public static let unlikelyError = ATTErrorCode(0x0E)
    /// The attribute requires encryption before it can be read or written.
    public static let insufficientEncryption = ATTErrorCode(0x0F)
    /// The attribute type is not a supported grouping attribute as defined by a higher layer.
    public static let unsupportedGroupType = ATTErrorCode(0x10)
    /// Insufficient resources to complete the request.
    public static let insufficientResources = ATTErrorCode(0x11)
    /// The server requests the client to rediscover the database.
    public static let databaseOutOfSync = ATTErrorCode(0x12)
    /// The attribute parameter value was not allowed.
    public static let valueNotAllowed = ATTErrorCode(0x13)
    /// CSS Part B §1.2.1: a write request was rejected by the profile.
    public static let writeRequestRejected = ATTErrorCode(0xFC)
    /// CSS Part B §1.2.2: a Client Characteristic Configuration descriptor is not configured as the
    /// procedure requires.
    public static let cccdImproperlyConfigured = ATTErrorCode(0xFD)
    /// CSS Part B §1.2.3: a request cannot be serviced because a procedure is already in progress.
    public static let procedureAlreadyInProgress = ATTErrorCode(0xFE)
    /// CSS Part B §1.2.4: an attribute value is out of range.
    public static let outOfRange = ATTErrorCode(0xFF)

    /// The first application error code (0x80–0x9F are defined by the higher-layer specification).
    @inlinable public static func applicationError(_ offset: UInt8) -> ATTErrorCode {
        ATTErrorCode(0x80 | (offset & 0x1F))
    }

    /// 0x80–0x9F: defined by the application or profile.
    @inlinable public var isApplicationError: Bool { (0x80...0x9F).contains(rawValue) }
    /// 0xE0–0xFF: common profile and service error codes (Core Specification Supplement Part B).
    @inlinable public var isCommonProfileError: Bool { rawValue >= 0xE0 }

    /// The specification's name, e.g. "Insufficient Encryption".
    public var name: String {
        switch rawValue {
        case 0x01: return "Invalid Handle"
        case 0x02: return "Read Not Permitted"
        case 0x03: return "Write Not Permitted"
        case 0x04: return "Invalid PDU"
        case 0x05: return "Insufficient Authentication"
        case 0x06: return "Request Not Supported"
        case 0x07: return "Invalid Offset"
        case 0x08: return "Insufficient Authorization"
        case 0x09: return "Prepare Queue Full"
        case 0x0A: return "Attribute Not Found"
        case 0x0B: return "Attribute Not Long"
        case 0x0C: return "Encryption Key Size Too Short"
        case 0x0D: return "Invalid Attribute Value Length"
        case 0x0E: return "Unlikely Error"
        case 0x0F: return "Insufficient Encryption"
        case 0x10: return "Unsupported Group Type"
        case 0x11: return "Insufficient Resources"
        case 0x12: return "Database Out Of Sync"
        case 0x13: return "Value Not Allowed"
        case 0x80...0x9F: return "Application Error"
        case 0xFC: return "Write Request Rejected"
        case 0xFD: return "Client Characteristic Configuration Descriptor Improperly Configured"
        case 0xFE: return "Procedure Already In Progress"
        case 0xFF: return "Out Of Range"
        case 0xE0...0xFB: return "Common Profile Error"
        default: return "Reserved"
        }
    }

    public var description: String { "\(name) (0x\(hex(rawValue, width: 2)))" }
}
