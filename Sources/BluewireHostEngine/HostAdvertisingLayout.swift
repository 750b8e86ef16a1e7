/// How an advertisement goes on the air (`HostEngine.advertisingLayout`): the command set and PDUs
/// the engine chose for the controller, and the octets of the advertising data and scan response
/// exactly as sent (Core Vol 3 Part C §11).
public struct HostAdvertisingLayout: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// Legacy advertising commands (Core Vol 4 Part E §7.8.5-9).
        case legacy
        /// Extended advertising commands (§7.8.53-56), sending legacy PDUs (ADV_IND...) or
        /// extended ones (ADV_EXT_IND + AUX_ADV_IND).
        case extended(legacyPDUs: Bool)
    }

    public var kind: Kind
    /// The encoded AD structures of the advertising data.
    public var advertisingData: [UInt8]
    /// The encoded AD structures of the scan response (empty when not scannable or nothing to say).
    public var scanResponseData: [UInt8]

    public init(kind: Kind, advertisingData: [UInt8], scanResponseData: [UInt8]) {
        self.kind = kind
        self.advertisingData = advertisingData
        self.scanResponseData = scanResponseData
    }
}
