import BluewireCore

/// Why a GATT database could not be built or changed.
public enum GATTDatabaseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Handle 0x0000 is reserved and shall not be used (Core Vol 3 Part F §3.2.2).
    case reservedHandle
    /// Handles must strictly increase through the table; this one does not.
    case handleNotAscending(UInt16)
    /// Every handle up to 0xFFFF is used.
    case outOfHandles
    /// A cached value is longer than the 512 bytes an attribute may hold (Part F §3.2.9).
    case valueTooLong(handle: UInt16, length: Int)
    /// An include or characteristic was added before any service.
    case noServiceOpen
    /// A descriptor was added before any characteristic of the current service.
    case noCharacteristicOpen
    /// Include declarations must come before the service's characteristics (Part G §3).
    case includeAfterCharacteristic
    /// A service can only be included once it is complete, and only from this builder.
    case serviceNotIncludable(startHandle: UInt16)
    /// No attribute has this handle.
    case noSuchHandle(UInt16)
    /// The attribute's value belongs to an application handler, not the database.
    case valueIsDynamic(UInt16)

    public var description: String {
        switch self {
        case .reservedHandle: return "handle 0x0000 is reserved"
        case .handleNotAscending(let h): return "handle 0x\(hex(h, width: 4)) does not follow the previous handle"
        case .outOfHandles: return "no attribute handles left"
        case .valueTooLong(let h, let n): return "value of 0x\(hex(h, width: 4)) is \(n) bytes (maximum 512)"
        case .noServiceOpen: return "no service to add to"
        case .noCharacteristicOpen: return "no characteristic to add a descriptor to"
        case .includeAfterCharacteristic: return "includes must precede characteristics"
        case .serviceNotIncludable(let h): return "service at 0x\(hex(h, width: 4)) cannot be included"
        case .noSuchHandle(let h): return "no attribute 0x\(hex(h, width: 4))"
        case .valueIsDynamic(let h): return "attribute 0x\(hex(h, width: 4)) has a dynamic value"
        }
    }
}
