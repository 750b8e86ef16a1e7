import BluewireCore

/// An LE Meta event (Core Vol 4 Part E §7.7.65): the first parameter is the subevent code.
/// Subevents this module does not interpret stay `.unknown` with their parameters.
public enum LEMetaEvent: Hashable, Sendable {
    /// The two connection completes are `indirect` (boxed): the largest payload, one per connection,
    /// which otherwise every copy of an event switches over (about 2 KB of a firmware image).
    indirect case connectionComplete(LEConnectionComplete)
    case advertisingReport(LEAdvertisingReportEvent)
    case connectionUpdateComplete(LEConnectionUpdateComplete)
    case readRemoteFeaturesComplete(LEReadRemoteFeaturesComplete)
    case longTermKeyRequest(LELongTermKeyRequest)
    case dataLengthChange(LEDataLengthChange)
    /// Subevent 0x0A (v1) or 0x29 (v2, with advertising and sync handles).
    indirect case enhancedConnectionComplete(LEConnectionComplete)
    case directedAdvertisingReport(LEDirectedAdvertisingReportEvent)
    case phyUpdateComplete(LEPHYUpdateComplete)
    case extendedAdvertisingReport(LEExtendedAdvertisingReportEvent)
    case advertisingSetTerminated(LEAdvertisingSetTerminated)
    case channelSelectionAlgorithm(LEChannelSelectionAlgorithm)
    case unknown(subevent: LESubeventCode, parameters: ArraySlice<UInt8>)

    public var subeventCode: LESubeventCode {
        switch self {
        case .connectionComplete: .connectionComplete
        case .advertisingReport: .advertisingReport
        case .connectionUpdateComplete: .connectionUpdateComplete
        case .readRemoteFeaturesComplete: .readRemoteFeaturesComplete
        case .longTermKeyRequest: .longTermKeyRequest
        case .dataLengthChange: .dataLengthChange
        case .enhancedConnectionComplete(let e): e.advertisingHandle == nil ? .enhancedConnectionCompleteV1 : .enhancedConnectionCompleteV2
        case .directedAdvertisingReport: .directedAdvertisingReport
        case .phyUpdateComplete: .phyUpdateComplete
        case .extendedAdvertisingReport: .extendedAdvertisingReport
        case .advertisingSetTerminated: .advertisingSetTerminated
        case .channelSelectionAlgorithm: .channelSelectionAlgorithm
        case .unknown(let code, _): code
        }
    }

    /// Decodes from a reader over the whole event packet positioned just after the subevent code,
    /// so that error offsets count from the packet start.
    @inlinable
    public init(subevent: LESubeventCode, reader r: inout ByteReader) throws(DecodeError) {
        switch subevent {
        case .connectionComplete: self = .connectionComplete(try LEConnectionComplete(decoding: &r, version: 0))
        case .advertisingReport:
            let n = try r.readUInt8("Num_Reports")
            self = .advertisingReport(LEAdvertisingReportEvent(numReports: n, reader: r))
        case .connectionUpdateComplete: self = .connectionUpdateComplete(try LEConnectionUpdateComplete(decoding: &r))
        case .readRemoteFeaturesComplete: self = .readRemoteFeaturesComplete(try LEReadRemoteFeaturesComplete(decoding: &r))
        case .longTermKeyRequest: self = .longTermKeyRequest(try LELongTermKeyRequest(decoding: &r))
        case .dataLengthChange: self = .dataLengthChange(try LEDataLengthChange(decoding: &r))
        case .enhancedConnectionCompleteV1:
            self = .enhancedConnectionComplete(try LEConnectionComplete(decoding: &r, version: 1))
        case .enhancedConnectionCompleteV2:
            self = .enhancedConnectionComplete(try LEConnectionComplete(decoding: &r, version: 2))
        case .directedAdvertisingReport:
            let n = try r.readUInt8("Num_Reports")
            self = .directedAdvertisingReport(LEDirectedAdvertisingReportEvent(numReports: n, reader: r))
        case .phyUpdateComplete: self = .phyUpdateComplete(try LEPHYUpdateComplete(decoding: &r))
        case .extendedAdvertisingReport:
            let n = try r.readUInt8("Num_Reports")
            self = .extendedAdvertisingReport(LEExtendedAdvertisingReportEvent(numReports: n, reader: r))
        case .advertisingSetTerminated: self = .advertisingSetTerminated(try LEAdvertisingSetTerminated(decoding: &r))
        case .channelSelectionAlgorithm: self = .channelSelectionAlgorithm(try LEChannelSelectionAlgorithm(decoding: &r))
        default: self = .unknown(subevent: subevent, parameters: r.readRemaining())
        }
    }
}
