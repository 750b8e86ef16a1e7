import BluewireCore
import BluewireSMP

extension BluetoothAddress {
    /// The address as SMP's Identity Address Information carries it (Core Vol 3 Part H §3.6.5).
    public var smpForm: SMPAddress {
        SMPAddress(isRandom: type.isRandom, octets: (0..<6).map { UInt8(truncatingIfNeeded: value >> UInt64(8 * $0)) })
    }
}
