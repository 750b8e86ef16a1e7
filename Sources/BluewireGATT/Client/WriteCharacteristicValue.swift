import BluewireATT

/// Write Characteristic Value (Core Vol 3 Part G §4.9.3), also Write Characteristic Descriptors
/// (§4.12.3): one Write Request, acknowledged by a Write Response. The value must fit one PDU
/// (ATT_MTU − 3 octets); use `PreparedWrites.writeLong` for longer values.
public struct WriteCharacteristicValue: GATTClientProcedure, Sendable {
    public let handle: UInt16
    public let value: [UInt8]
    public let mtu: Int

    public init(handle: UInt16, value: [UInt8], mtu: Int) {
        self.handle = handle
        self.value = value
        self.mtu = mtu
    }

    public mutating func start() throws(GATTClientError) -> GATTProcedureStep<Void> {
        guard handle != 0 else { throw .invalidHandleRange(start: 0, end: 0) }
        guard value.count <= mtu - 3 else { throw .valueTooLong(length: value.count, maximum: mtu - 3) }
        return .request(.writeRequest(handle: handle, value: value[...]))
    }

    public mutating func receive(_ response: ATTPDU) throws(GATTClientError) -> GATTProcedureStep<Void> {
        guard case .writeResponse = response else {
            throw GATTClientError.unexpected(response, to: .writeRequest)
        }
        return .finished(())
    }
}

/// Write Without Response (Core Vol 3 Part G §4.9.1): a Write Command, which the server never answers
/// (so there is no procedure state to keep). The value must fit one PDU (ATT_MTU − 3 octets).
public enum WriteWithoutResponse {
    /// The Write Command PDU for `value` at `handle`.
    public static func command(handle: UInt16, value: [UInt8], mtu: Int) throws(GATTClientError) -> ATTPDU {
        guard handle != 0 else { throw .invalidHandleRange(start: 0, end: 0) }
        guard value.count <= mtu - 3 else { throw .valueTooLong(length: value.count, maximum: mtu - 3) }
        return .writeCommand(handle: handle, value: value[...])
    }
}
