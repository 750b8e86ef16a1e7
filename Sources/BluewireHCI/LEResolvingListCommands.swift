import BluewireCore

/// LE Add Device To Resolving List (Core Vol 4 Part E §7.8.38): one peer's identity address and IRK (and
/// the local IRK used towards it), so the controller resolves that peer's resolvable private addresses
/// itself and reports its identity address (Peer_Address_Type 0x02/0x03, §7.7.65.2, §7.7.65.10).
///
/// The command shall not be used while address resolution is enabled and advertising, scanning or an
/// LE (Extended) Create Connection is under way: the controller answers Command Disallowed (0x0C). A full
/// list answers Memory Capacity Exceeded (0x07).
public struct LEAddDeviceToResolvingList: HCICommandParameters {
    public static var opcode: HCIOpcode { .leAddDeviceToResolvingList }
    /// Peer_Identity_Address_Type and Peer_Identity_Address: 0x00 public, 0x01 random (static).
    public var peerIdentityAddress: BluetoothAddress
    /// Peer_IRK, 16 octets least significant first (the order SMP distributes it in, Vol 3 Part H §3.6.4).
    public var peerIRK: [UInt8]
    /// Local_IRK, 16 octets least significant first; all zero when this device has none.
    public var localIRK: [UInt8]

    public init(peerIdentityAddress: BluetoothAddress, peerIRK: [UInt8], localIRK: [UInt8]) {
        self.peerIdentityAddress = peerIdentityAddress
        self.peerIRK = peerIRK
        self.localIRK = localIRK
    }

    public func encode(into writer: inout ByteWriter) {
        writer.append(UInt8(peerIdentityAddress.type.isRandom ? 0x01 : 0x00))
        writer.append(peerIdentityAddress)
        for i in 0..<16 { writer.append(i < peerIRK.count ? peerIRK[i] : 0) }
        for i in 0..<16 { writer.append(i < localIRK.count ? localIRK[i] : 0) }
    }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        let type: BluetoothAddress.AddressType = try reader.readUInt8("Peer_Identity_Address_Type") & 1 == 1 ? .random : .public
        peerIdentityAddress = try reader.readAddress(type: type, "Peer_Identity_Address")
        peerIRK = Array(try reader.readBytes(16, "Peer_IRK"))
        localIRK = Array(try reader.readBytes(16, "Local_IRK"))
    }
}

/// LE Set Address Resolution Enable (§7.8.44): 0x01 turns the controller's resolution of resolvable private
/// addresses with its resolving list on, 0x00 off. It shall not be used while advertising, scanning or an
/// LE (Extended) Create Connection is under way (Command Disallowed, 0x0C), whether resolution is on or not.
public struct LESetAddressResolutionEnable: HCICommandParameters {
    public static var opcode: HCIOpcode { .leSetAddressResolutionEnable }
    public var enable: Bool

    public init(enable: Bool) { self.enable = enable }

    public func encode(into writer: inout ByteWriter) { writer.append(UInt8(enable ? 0x01 : 0x00)) }

    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        enable = try reader.readUInt8("Address_Resolution_Enable") != 0
    }
}

/// LE Read Resolving List Size (§7.8.41) return parameters: how many entries the controller's resolving
/// list holds at most.
public struct LEReadResolvingListSizeReturn: CommandReturnParameters {
    public var status: HCIStatus
    public var resolvingListSize: UInt8

    public init(status: HCIStatus = .success, resolvingListSize: UInt8) {
        self.status = status
        self.resolvingListSize = resolvingListSize
    }

    @inlinable public init(decoding reader: inout ByteReader) throws(DecodeError) {
        status = HCIStatus(try reader.readUInt8("Status"))
        resolvingListSize = try reader.readUInt8("Resolving_List_Size")
    }
}
