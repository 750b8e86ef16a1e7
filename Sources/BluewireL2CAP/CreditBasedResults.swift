import BluewireCore

/// The Result of an LE Credit Based Connection Response (Core Vol 3 Part A §4.23, Table 4.16).
public struct LECreditBasedConnectionResult: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let connectionSuccessful = Self(rawValue: 0x0000)
    public static let spsmNotSupported = Self(rawValue: 0x0002)
    public static let noResourcesAvailable = Self(rawValue: 0x0004)
    public static let insufficientAuthentication = Self(rawValue: 0x0005)
    public static let insufficientAuthorization = Self(rawValue: 0x0006)
    public static let encryptionKeySizeTooShort = Self(rawValue: 0x0007)
    public static let insufficientEncryption = Self(rawValue: 0x0008)
    public static let invalidSourceCID = Self(rawValue: 0x0009)
    public static let sourceCIDAlreadyAllocated = Self(rawValue: 0x000A)
    public static let unacceptableParameters = Self(rawValue: 0x000B)

    /// The specification's wording; nil for reserved values.
    public var name: String? {
        switch rawValue {
        case 0x0000: return "Connection successful"
        case 0x0002: return "Connection refused – SPSM not supported"
        case 0x0004: return "Connection refused – no resources available"
        case 0x0005: return "Connection refused – insufficient authentication"
        case 0x0006: return "Connection refused – insufficient authorization"
        case 0x0007: return "Connection refused – encryption key size too short"
        case 0x0008: return "Connection refused – insufficient encryption"
        case 0x0009: return "Connection refused – invalid Source CID"
        case 0x000A: return "Connection refused – Source CID already allocated"
        case 0x000B: return "Connection refused – unacceptable parameters"
        default: return nil
        }
    }

    public var description: String { name ?? "Reserved (0x\(hex(rawValue, width: 4)))" }
}

/// The Result of a Credit Based Connection Response (Core Vol 3 Part A §4.26, Table 4.18): "all"
/// results apply to every channel of the request, "some" results to those whose Destination CID is
/// 0x0000.
public struct CreditBasedConnectionResult: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let allConnectionsSuccessful = Self(rawValue: 0x0000)
    public static let allRefusedSPSMNotSupported = Self(rawValue: 0x0002)
    public static let someRefusedInsufficientResources = Self(rawValue: 0x0004)
    public static let allRefusedInsufficientAuthentication = Self(rawValue: 0x0005)
    public static let allRefusedInsufficientAuthorization = Self(rawValue: 0x0006)
    public static let allRefusedEncryptionKeySizeTooShort = Self(rawValue: 0x0007)
    public static let allRefusedInsufficientEncryption = Self(rawValue: 0x0008)
    public static let someRefusedInvalidSourceCID = Self(rawValue: 0x0009)
    public static let someRefusedSourceCIDAlreadyAllocated = Self(rawValue: 0x000A)
    public static let allRefusedUnacceptableParameters = Self(rawValue: 0x000B)
    public static let allRefusedInvalidParameters = Self(rawValue: 0x000C)
    public static let allPendingNoFurtherInformation = Self(rawValue: 0x000D)
    public static let allPendingAuthentication = Self(rawValue: 0x000E)
    public static let allPendingAuthorization = Self(rawValue: 0x000F)

    /// The specification's wording; nil for reserved values.
    public var name: String? {
        switch rawValue {
        case 0x0000: return "All connections successful"
        case 0x0002: return "All connections refused – SPSM not supported"
        case 0x0004: return "Some connections refused – insufficient resources available"
        case 0x0005: return "All connections refused – insufficient authentication"
        case 0x0006: return "All connections refused – insufficient authorization"
        case 0x0007: return "All connections refused – encryption key size too short"
        case 0x0008: return "All connections refused – insufficient encryption"
        case 0x0009: return "Some connections refused – invalid Source CID"
        case 0x000A: return "Some connections refused – Source CID already allocated"
        case 0x000B: return "All connections refused – unacceptable parameters"
        case 0x000C: return "All connections refused – invalid parameters"
        case 0x000D: return "All connections pending – no further information available"
        case 0x000E: return "All connections pending – authentication pending"
        case 0x000F: return "All connections pending – authorization pending"
        default: return nil
        }
    }

    /// Whether the result refuses every channel of the request (a "some" result refuses only those
    /// answered with Destination CID 0x0000, §4.26).
    public var refusesAll: Bool {
        switch rawValue {
        case 0x0000, 0x0004, 0x0009, 0x000A: return false
        default: return true
        }
    }

    /// Whether the result says the responder will answer again later (0x000D–0x000F).
    public var isPending: Bool { (0x000D...0x000F).contains(rawValue) }

    public var description: String { name ?? "Reserved (0x\(hex(rawValue, width: 4)))" }
}

/// The Result of a Credit Based Reconfigure Response (Core Vol 3 Part A §4.28, Table 4.20).
public struct CreditBasedReconfigureResult: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    @inlinable public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let reconfigurationSuccessful = Self(rawValue: 0x0000)
    public static let reductionInMTUNotAllowed = Self(rawValue: 0x0001)
    public static let reductionInMPSNotAllowed = Self(rawValue: 0x0002)
    public static let destinationCIDsInvalid = Self(rawValue: 0x0003)
    public static let unacceptableParameters = Self(rawValue: 0x0004)

    /// The specification's wording; nil for reserved values.
    public var name: String? {
        switch rawValue {
        case 0x0000: return "Reconfiguration successful"
        case 0x0001: return "Reconfiguration failed – reduction in size of MTU not allowed"
        case 0x0002: return "Reconfiguration failed – reduction in size of MPS not allowed for more than one channel at a time"
        case 0x0003: return "Reconfiguration failed – one or more Destination CIDs invalid"
        case 0x0004: return "Reconfiguration failed – other unacceptable parameters"
        default: return nil
        }
    }

    public var description: String { name ?? "Reserved (0x\(hex(rawValue, width: 4)))" }
}
