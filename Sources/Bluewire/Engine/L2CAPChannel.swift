import BluewireHostEngine
import BluewireL2CAP
import Synchronization

/// An open LE credit based channel (Core Vol 3 Part A §4.22, §10.1) on an `EngineHost`, from
/// `host.openChannel(...)` or a `host.listen(...)` listener.
///
/// Received SDUs come through `sdus`, one consumer at a time. The peer gets a K-frame's credit
/// back only once the SDU it carried was taken from `sdus` (the engine's `.consumedSDUs`), so a
/// slow reader slows the sender and the SDUs a channel holds never exceed the credits it granted
/// (`credits` × our MPS octets). `send(_:)` returns once the peer granted the credits for the
/// SDU's K-frames and the last one went to the link.
///
/// When the channel closes, pending sends fail with the reason and `sdus` ends after the SDUs
/// already received: normally when either side closed it, with the error otherwise (link lost,
/// flow-control violation...). The channel object holds no protocol state: the engine decides.
public final class L2CAPChannel: Sendable {
    public let connection: UInt16
    /// Our CID: the channel's name in the engine.
    public let cid: UInt16
    public let psm: SPSM
    /// True when we opened it; false for a channel a peer opened to a listener.
    public let initiatedLocally: Bool
    /// The largest SDU we accept, and K-frame payload.
    public let mtu: Int
    public let mps: Int
    /// The largest SDU the peer accepts (`send` refuses longer ones), and its MPS.
    public let peerMTU: Int
    public let peerMPS: Int

    let host: EngineHost
    let state = Mutex(State())

    struct State {
        var received: [[UInt8]] = []
        var head = 0
        var waiter: CheckedContinuation<Void, Never>?
        /// Set once the channel ended: nil error for a close by either side.
        var ended: Ended?

        mutating func pop() -> [UInt8]? {
            guard head < received.count else { return nil }
            let sdu = received[head]
            received[head] = []
            head += 1
            if head == received.count {
                received.removeAll(keepingCapacity: true)
                head = 0
            }
            return sdu
        }
    }

    struct Ended: Sendable {
        var reason: CreditBasedDisconnectReason?
        var error: L2CAPChannelError?
    }

    init(host: EngineHost, _ channel: HostChannel) {
        self.host = host
        connection = channel.connection
        cid = channel.cid
        psm = channel.psm
        initiatedLocally = channel.initiatedLocally
        mtu = channel.mtu
        mps = channel.mps
        peerMTU = channel.peerMTU
        peerMPS = channel.peerMPS
    }

    /// The SDUs the peer sends, in order, each as it completes.
    public var sdus: SDUs { SDUs(channel: self) }

    /// Why the channel ended, once it has: `.closed(.local)`/`.closed(.remote)` for a close by
    /// either side, otherwise the error `sdus` ended with. Nil while open.
    public var endReason: L2CAPChannelError? {
        state.withLock { state in
            guard let ended = state.ended else { return nil }
            return ended.error ?? ended.reason.map { .closed($0) }
        }
    }

    /// Sends one SDU (at most `peerMTU` octets), cut into K-frames of at most `peerMPS`; waits for
    /// the peer's credits (§10.1). SDUs from one task go out in order.
    public func send(_ sdu: [UInt8]) async throws(L2CAPChannelError) {
        guard sdu.count <= peerMTU else { throw .sduTooLong(length: sdu.count, peerMTU: peerMTU) }
        if let error = endReason { throw error }
        switch await host.perform(.sendSDU(connection: connection, cid: cid, sdu)) {
        case .success: return
        case .failure(let error): throw failure(error)
        }
    }

    /// Closes the channel the way a socket's close does: every SDU already sent (queued for the
    /// peer's credits) goes out first, K-frame by K-frame as credits allow (§10.1), and only then
    /// the Disconnection Request (§4.6); returns once the peer answered (or RTX passed). A send
    /// that could not complete (the peer or the link went first) fails with the reason. SDUs
    /// already received stay readable. Nothing happens on a closed channel. `abort()` is the
    /// abortive close.
    public func close() async {
        guard endReason == nil else { return }
        _ = await host.perform(.closeChannel(connection: connection, cid: cid))
    }

    /// Abortive close: SDUs still waiting for credits are dropped (their sends fail) and the
    /// Disconnection Request (§4.6) goes at once; returns once the peer answered (or RTX passed).
    /// Whatever of the dropped data the peer got is lost with the channel: `close()` keeps it.
    public func abort() async {
        guard endReason == nil else { return }
        _ = await host.perform(.closeChannel(connection: connection, cid: cid, abortive: true))
    }

    /// An engine failure as the channel's error: the reason it ended, if it has.
    func failure(_ error: HostEngineError) -> L2CAPChannelError {
        if let ended = endReason { return ended }
        switch error {
        case .channelClosed(let reason): return .closed(reason)
        case .disconnected(let status): return .disconnected(status)
        case .channel(.sduExceedsMTU(let length, let mtu)): return .sduTooLong(length: length, peerMTU: mtu)
        default: return .engine(error)
        }
    }

    // MARK: from the router (on the host's executor)

    func deliver(_ sdu: [UInt8]) {
        let waiter = state.withLock { state in
            state.received.append(sdu)
            return state.waiter.take()
        }
        waiter?.resume()
    }

    func end(reason: CreditBasedDisconnectReason?, error: L2CAPChannelError?) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.ended == nil { state.ended = Ended(reason: reason, error: error) }
            return state.waiter.take()
        }
        waiter?.resume()
    }

    // MARK: reading

    enum Next {
        case sdu([UInt8])
        case end(L2CAPChannelError?)
        case wait
    }

    func next() async throws(L2CAPChannelError) -> [UInt8]? {
        while true {
            let next = state.withLock { state -> Next in
                if let sdu = state.pop() { return .sdu(sdu) }
                if let ended = state.ended { return .end(ended.error) }
                return .wait
            }
            switch next {
            case .sdu(let sdu):
                await host.consumed(connection: connection, cid: cid)
                return sdu
            case .end(nil):
                return nil
            case .end(let error?):
                throw error
            case .wait:
                if Task.isCancelled { throw .cancelled }
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let ready = state.withLock { state in
                            if state.head < state.received.count || state.ended != nil || Task.isCancelled { return true }
                            state.waiter = continuation
                            return false
                        }
                        if ready { continuation.resume() }
                    }
                } onCancel: {
                    state.withLock { $0.waiter.take() }?.resume()
                }
            }
        }
    }

    /// The channel's incoming SDUs. Ends (nil) when either side closed the channel; throws the
    /// reason when it ended otherwise, or `.cancelled` when the reading task is cancelled.
    public struct SDUs: AsyncSequence, Sendable {
        public typealias Element = [UInt8]
        public typealias Failure = L2CAPChannelError
        let channel: L2CAPChannel

        public func makeAsyncIterator() -> Iterator { Iterator(channel: channel) }

        public struct Iterator: AsyncIteratorProtocol {
            public typealias Element = [UInt8]
            public typealias Failure = L2CAPChannelError
            let channel: L2CAPChannel

            public mutating func next() async throws(L2CAPChannelError) -> [UInt8]? {
                try await channel.next()
            }

            public mutating func next(isolation actor: isolated (any Actor)?) async throws(L2CAPChannelError) -> [UInt8]? {
                try await channel.next()
            }
        }
    }
}
