import BluewireCore

/// The credit based channels of one LE link and the LE signaling channel that manages them (Core
/// Vol 3 Part A §4.22–4.28, §10.1), sans-I/O, in both roles.
///
/// Feed it every B-frame received on CID 0x0005 and on dynamic CIDs (`receive`), the time
/// (`advanceTime`), and the application's calls (`register`, `connect`, `send`, `readSDU`, ...); take
/// the frames to send and the events with `takeOutputs()`. Commands that are not about credit based
/// channels go to an embedded `LESignalingResponder` (Connection Parameter Update, Command Reject
/// for what is not understood), so this is the whole LE signaling channel of the link.
public struct CreditBasedChannelManager: Sendable {
    public struct Configuration: Hashable, Sendable {
        /// The signaling timeout (RTX, §6.2.1: 1 to 60 seconds).
        public var rtx: TimeSpan
        /// How long to wait after an "all connections pending" response (ERTX, 60 s).
        public var ertx: TimeSpan
        public init(rtx: TimeSpan = .seconds(2), ertx: TimeSpan = .seconds(60)) {
            self.rtx = rtx
            self.ertx = ertx
        }
    }

    /// A service listening on a PSM.
    public struct Service: Hashable, Sendable {
        public var parameters: CreditBasedChannelParameters
        public var security: L2CAPSecurityRequirement
        /// The most channels to the PSM the peer may have open at once on the link (nil: no limit).
        /// A request beyond it is refused, in an enhanced request only the channels beyond it
        /// (§4.23 No resources available, §4.26 Some connections refused – insufficient resources),
        /// so the peer never sends on a channel nobody serves.
        public var maximumChannels: Int?
        public init(
            parameters: CreditBasedChannelParameters = .init(), security: L2CAPSecurityRequirement = .none,
            maximumChannels: Int? = nil
        ) {
            self.parameters = parameters
            self.security = security
            self.maximumChannels = maximumChannels
        }

        /// How many more channels it takes when `open` are open already.
        func room(open: Int) -> Int {
            guard let maximumChannels else { return Int.max }
            return Swift.max(0, maximumChannels - open)
        }
    }

    enum PendingRequest: Hashable, Sendable {
        case connect(localCIDs: [UInt16], psm: SPSM)
        case disconnect(localCID: UInt16)
        case reconfigure(localCIDs: [UInt16], mtu: Int, mps: Int)
        /// Disconnecting a channel the peer opened with an invalid response; nothing is kept of it.
        case abandon
    }

    public let configuration: Configuration
    /// The link's security now; the caller updates it when encryption starts or the key changes.
    public var linkSecurity: L2CAPLinkSecurity
    /// The embedded responder for non-credit-based signaling.
    public internal(set) var signaling: LESignalingResponder
    var services: [UInt16: Service] = [:]
    var channels: [UInt16: CreditBasedChannel] = [:]
    var pending: [UInt8: (request: PendingRequest, deadline: MonotonicInstant)] = [:]
    var outputs: [CreditBasedOutput] = []
    var outputHead = 0

    public init(role: LESignalingResponder.Role, linkSecurity: L2CAPLinkSecurity = .open, configuration: Configuration = .init()) {
        self.signaling = LESignalingResponder(role: role)
        self.linkSecurity = linkSecurity
        self.configuration = configuration
    }

    // MARK: Registry

    /// Accepts channels to `psm` with `service`'s parameters and security (SIG-assigned
    /// 0x0001–0x007F or dynamic 0x0080–0x00FF).
    public mutating func register(psm: SPSM, service: Service = .init()) throws(CreditBasedChannelError) {
        guard psm.isValid else { throw .invalidPSM(psm) }
        guard services[psm.rawValue] == nil else { throw .psmAlreadyRegistered(psm) }
        services[psm.rawValue] = service
    }

    /// Refuses channels to `psm` from now on (open channels stay open).
    public mutating func unregister(psm: SPSM) {
        services[psm.rawValue] = nil
    }

    /// The lowest free dynamic PSM (0x0080–0x00FF), for a service that publishes its own.
    public func freeDynamicPSM() -> SPSM? {
        for value in UInt16(0x0080)...0x00FF where services[value] == nil { return SPSM(value) }
        return nil
    }

    // MARK: Inspection

    /// The channel with this local CID.
    public func channel(_ localCID: UInt16) -> CreditBasedChannel? { channels[localCID] }
    /// Local CIDs of every channel, in order.
    public var channelIDs: [UInt16] { channels.keys.sorted() }

    /// The earliest signaling deadline; call `advanceTime(to:)` when it passes.
    public var deadline: MonotonicInstant? {
        var earliest: MonotonicInstant?
        for (_, entry) in pending where earliest.map({ entry.deadline < $0 }) ?? true { earliest = entry.deadline }
        return earliest
    }

    // MARK: Outputs

    public mutating func nextOutput() -> CreditBasedOutput? {
        guard outputHead < outputs.count else { return nil }
        let output = outputs[outputHead]
        outputHead += 1
        if outputHead == outputs.count {
            outputs.removeAll(keepingCapacity: true)
            outputHead = 0
        }
        return output
    }

    public mutating func takeOutputs() -> [CreditBasedOutput] {
        let taken = Array(outputs[outputHead...])
        outputs.removeAll(keepingCapacity: true)
        outputHead = 0
        return taken
    }

    mutating func emit(_ event: CreditBasedChannelEvent) { outputs.append(.event(event)) }

    mutating func sendCommand(_ command: LESignalingCommand) {
        outputs.append(.send(L2CAPBasicFrame(channelID: .leSignaling, payload: command.encode()[...])))
    }

    /// An identifier no outstanding request uses (§4: a new request gets a new identifier).
    mutating func allocateIdentifier() -> UInt8 {
        var id = signaling.allocateIdentifier()
        var tries = 0
        while pending[id] != nil && tries < 255 {
            id = signaling.allocateIdentifier()
            tries += 1
        }
        return id
    }

    mutating func allocateLocalCID() -> UInt16? {
        for cid in UInt16(0x0040)...0x007F where channels[cid] == nil { return cid }
        return nil
    }

    /// Channels to `psm` the peer opened that are not closed yet.
    func acceptedChannelCount(psm: SPSM) -> Int {
        var count = 0
        for (_, channel) in channels where channel.psm == psm && !channel.isInitiator { count += 1 }
        return count
    }

    func localCID(forRemote remote: UInt16) -> UInt16? {
        for (cid, channel) in channels where channel.remoteCID == remote && channel.state != .connecting { return cid }
        return nil
    }

    // MARK: Initiator

    /// Sends an LE Credit Based Connection Request (§4.22) for one channel to `psm`; returns its local
    /// CID. The outcome arrives as `.connected` or `.connectionFailed`.
    public mutating func connect(
        psm: SPSM, parameters: CreditBasedChannelParameters = .init(), now: MonotonicInstant
    ) throws(CreditBasedChannelError) -> UInt16 {
        guard psm.isValid else { throw .invalidPSM(psm) }
        guard let cid = allocateLocalCID() else { throw .noFreeChannelID }
        let local = parameters.normalized(for: .leCreditBased)
        channels[cid] = CreditBasedChannel(localCID: cid, psm: psm, kind: .leCreditBased, isInitiator: true, local: local)
        let id = allocateIdentifier()
        pending[id] = (.connect(localCIDs: [cid], psm: psm), now + configuration.rtx)
        sendCommand(LESignalingCommand(identifier: id, body: .leCreditBasedConnectionRequest(
            spsm: psm.rawValue, sourceCID: cid, mtu: UInt16(local.mtu), mps: UInt16(local.mps),
            initialCredits: UInt16(local.initialCredits))))
        return cid
    }

    /// Sends a Credit Based Connection Request (§4.25) for `count` (1–5) channels to `psm`; returns
    /// their local CIDs in request order.
    public mutating func connectEnhanced(
        psm: SPSM, count: Int, parameters: CreditBasedChannelParameters = .init(), now: MonotonicInstant
    ) throws(CreditBasedChannelError) -> [UInt16] {
        guard psm.isValid else { throw .invalidPSM(psm) }
        guard (1...5).contains(count) else { throw .invalidChannelCount(count) }
        let local = parameters.normalized(for: .enhancedCreditBased)
        var cids: [UInt16] = []
        for _ in 0..<count {
            guard let cid = allocateLocalCID() else {
                for allocated in cids { channels[allocated] = nil }
                throw .noFreeChannelID
            }
            channels[cid] = CreditBasedChannel(localCID: cid, psm: psm, kind: .enhancedCreditBased, isInitiator: true, local: local)
            cids.append(cid)
        }
        let id = allocateIdentifier()
        pending[id] = (.connect(localCIDs: cids, psm: psm), now + configuration.rtx)
        sendCommand(LESignalingCommand(identifier: id, body: .creditBasedConnectionRequest(
            spsm: psm.rawValue, mtu: UInt16(local.mtu), mps: UInt16(local.mps),
            initialCredits: UInt16(local.initialCredits), sourceCIDs: L2CAPCIDList(cids))))
        return cids
    }

    /// Closes an open channel the way a socket's close does: every SDU already queued goes out
    /// first, K-frame by K-frame as the peer's credits allow (§10.1), and only then the
    /// Disconnection Request (§4.6), so the peer receives everything that was sent before the
    /// close. `.disconnected(.local)` follows the response (or the RTX timeout, which runs from
    /// the request). Until then `send` is refused. A peer that never grants the credits keeps the
    /// channel open: `abort(_:now:)` ends it at once. Asking again while the SDUs drain changes
    /// nothing.
    public mutating func disconnect(_ localCID: UInt16, now: MonotonicInstant) throws(CreditBasedChannelError) {
        guard let channel = channels[localCID] else { throw .unknownChannel(localCID) }
        guard channel.state == .open else { throw .channelNotOpen(localCID) }
        guard channel.queuedSendCount == 0 else {
            channels[localCID]?.closesWhenSent = true
            return
        }
        startDisconnect(localCID, reason: .local, now: now)
    }

    /// Abortive close: SDUs still queued (and the rest of one half sent) are dropped and the
    /// Disconnection Request (§4.6) goes at once; `.disconnected(.local)` follows the response.
    /// What the peer receives of the queued data is undefined: use `disconnect(_:now:)` to keep it.
    public mutating func abort(_ localCID: UInt16, now: MonotonicInstant) throws(CreditBasedChannelError) {
        guard let channel = channels[localCID] else { throw .unknownChannel(localCID) }
        guard channel.state == .open else { throw .channelNotOpen(localCID) }
        startDisconnect(localCID, reason: .local, now: now)
    }

    /// An orderly close waiting for its SDUs goes ahead once the last K-frame is out.
    mutating func disconnectIfDrained(_ localCID: UInt16, now: MonotonicInstant) {
        guard let channel = channels[localCID], channel.state == .open, channel.closesWhenSent,
              channel.queuedSendCount == 0
        else { return }
        startDisconnect(localCID, reason: .local, now: now)
    }

    mutating func startDisconnect(_ localCID: UInt16, reason: CreditBasedDisconnectReason, now: MonotonicInstant) {
        guard var channel = channels[localCID], channel.state == .open else { return }
        channel.state = .disconnecting
        channel.closeReason = reason
        channel.closesWhenSent = false
        channel.sendQueue = []
        channel.sendQueueHead = 0
        channel.segmenter = KFrameSegmenter(mps: channel.segmenter.mps)
        channels[localCID] = channel
        let id = allocateIdentifier()
        pending[id] = (.disconnect(localCID: localCID), now + configuration.rtx)
        sendCommand(LESignalingCommand(identifier: id, body: .disconnectionRequest(
            destinationCID: channel.remoteCID, sourceCID: localCID)))
    }

    /// Sends a Credit Based Reconfigure Request (§4.27) raising our MTU (and MPS) on open enhanced
    /// channels. The MTU may not shrink; the MPS may shrink only when one channel is named.
    public mutating func reconfigure(
        _ localCIDs: [UInt16], mtu: Int, mps: Int, now: MonotonicInstant
    ) throws(CreditBasedChannelError) {
        guard (1...5).contains(localCIDs.count) else { throw .invalidChannelCount(localCIDs.count) }
        guard (64...65535).contains(mtu), (64...65533).contains(mps) else { throw .invalidReconfiguration }
        for cid in localCIDs {
            guard let channel = channels[cid] else { throw .unknownChannel(cid) }
            guard channel.state == .open, channel.kind == .enhancedCreditBased else { throw .channelNotOpen(cid) }
            guard mtu >= channel.localMTU, mps >= channel.localMPS || localCIDs.count == 1 else { throw .invalidReconfiguration }
        }
        let id = allocateIdentifier()
        pending[id] = (.reconfigure(localCIDs: localCIDs, mtu: mtu, mps: mps), now + configuration.rtx)
        // The list names our own CIDs, the endpoints whose receive MTU/MPS change (BlueZ, Zephyr).
        sendCommand(LESignalingCommand(identifier: id, body: .creditBasedReconfigureRequest(
            mtu: UInt16(mtu), mps: UInt16(mps), destinationCIDs: L2CAPCIDList(localCIDs))))
    }

    // MARK: Time and link

    /// Expires signaling requests whose RTX passed: a connection fails, a disconnection completes.
    public mutating func advanceTime(to now: MonotonicInstant) {
        let expired = pending.filter { $0.value.deadline <= now }.keys.sorted()
        for id in expired {
            guard let entry = pending.removeValue(forKey: id) else { continue }
            switch entry.request {
            case .connect(let cids, let psm):
                for cid in cids where channels[cid]?.state == .connecting {
                    channels[cid] = nil
                    emit(.connectionFailed(localCID: cid, psm: psm, reason: .timeout))
                }
            case .disconnect(let cid):
                finishDisconnect(cid, fallback: .timeout)
            case .reconfigure(let cids, _, _):
                emit(.reconfigureFailed(localCIDs: cids, result: nil))
            case .abandon:
                break
            }
        }
    }

    /// The ACL link is gone: every channel closes and every request is abandoned.
    public mutating func linkDisconnected() {
        pending = [:]
        for cid in channels.keys.sorted() {
            channels[cid] = nil
            emit(.disconnected(localCID: cid, reason: .linkClosed))
        }
    }

    mutating func finishDisconnect(_ localCID: UInt16, fallback: CreditBasedDisconnectReason) {
        guard let channel = channels.removeValue(forKey: localCID) else { return }
        var reason = channel.closeReason ?? fallback
        if fallback == .timeout, reason == .local { reason = .timeout }
        emit(.disconnected(localCID: localCID, reason: reason))
    }
}
