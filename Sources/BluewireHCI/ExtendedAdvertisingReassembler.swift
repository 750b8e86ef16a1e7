import BluewireCore

/// Joins extended advertising reports whose Data_Status is "incomplete, more data to come" into one
/// advertisement (Core Vol 4 Part E §7.7.65.13; Vol 6 Part B §2.3.4.9: up to 1,650 octets, carried in
/// an AUX chain). Fragments are keyed by advertiser address, SID and whether they are scan response.
///
/// A report that is complete on its own (every legacy PDU, most extended ones) passes straight
/// through without copying. A chain the controller truncated is emitted with `isTruncated`, as is a
/// chain that would exceed 1,650 octets. At most `maxPendingChains` chains are held; the oldest is
/// dropped when a new one would exceed that.
public struct ExtendedAdvertisingReassembler: Sendable {
    public static let maxDataLength = 1650

    /// A whole advertisement: the last report of its chain with `data` holding every fragment.
    public struct Advertisement: Hashable, Sendable {
        public var report: LEExtendedAdvertisingReport
        /// The controller stopped the chain early, or it exceeded 1,650 octets.
        public var isTruncated: Bool
    }

    struct Key: Hashable, Sendable {
        var address: BluetoothAddress
        var sid: UInt8
        var scanResponse: Bool
    }

    struct Chain: Sendable {
        var key: Key
        var data: [UInt8]
        var overflowed: Bool
    }

    public let maxPendingChains: Int
    var chains: [Chain] = []

    public init(maxPendingChains: Int = 16) {
        self.maxPendingChains = max(1, maxPendingChains)
    }

    /// Chains waiting for more fragments.
    public var pendingCount: Int { chains.count }

    /// Adds one report; returns the advertisement when this report completes one.
    public mutating func add(_ report: LEExtendedAdvertisingReport) -> Advertisement? {
        let key = Key(address: report.address, sid: report.advertisingSID, scanResponse: report.isScanResponse)
        let index = chains.firstIndex { $0.key == key }
        let status = report.dataStatus
        guard let index else {
            switch status {
            case .complete, .reserved:
                return Advertisement(report: report, isTruncated: false)
            case .incompleteTruncated:
                return Advertisement(report: report, isTruncated: true)
            case .incompleteMoreToCome:
                if chains.count >= maxPendingChains { chains.removeFirst() }
                var chain = Chain(key: key, data: [], overflowed: false)
                append(report.data, to: &chain)
                chains.append(chain)
                return nil
            }
        }
        append(report.data, to: &chains[index])
        if status == .incompleteMoreToCome { return nil }
        let chain = chains.remove(at: index)
        var whole = report
        whole.data = chain.data[...]
        return Advertisement(report: whole, isTruncated: chain.overflowed || status == .incompleteTruncated)
    }

    /// Drops every pending chain (when scanning stops).
    public mutating func reset() { chains.removeAll() }

    private func append(_ data: ArraySlice<UInt8>, to chain: inout Chain) {
        let room = Self.maxDataLength - chain.data.count
        if data.count > room { chain.overflowed = true }
        chain.data.append(contentsOf: data.prefix(max(0, room)))
    }
}
