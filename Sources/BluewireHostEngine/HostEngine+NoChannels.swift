import BluewireCore
import BluewireHCI
import BluewireL2CAP

// Builds with BLUEWIRE_NO_CHANNELS (the firmware images, scripts/firmware.sh) leave the credit based
// channels and Enhanced ATT out: HostEngine+Channels, +ChannelRequests, +EATT, +EATTClient and
// LinkChannels are not compiled, and these stand-ins keep the engine's request switch as it is. LE
// signaling is answered by a bare `LESignalingResponder`, which refuses every channel request.
#if BLUEWIRE_NO_CHANNELS

/// LE signaling of one link (Core Vol 3 Part A §4) without credit based channels.
struct LinkChannels: Sendable {
    var signaling: LESignalingResponder

    init(role: HostLinkRole) {
        signaling = LESignalingResponder(role: role == .central ? .central : .peripheral)
    }
}

extension HostEngine {
    /// LE signaling (Core Vol 3 Part A §4): the responder answers, refusing credit based connection
    /// requests (§4.23, §4.26); a peripheral's Connection Parameter Update Request accepted by a
    /// central becomes LE Connection Update (Vol 4 Part E §7.8.18).
    mutating func receiveSignaling(handle: UInt16, payload: ArraySlice<UInt8>) {
        guard let index = links.index(forKey: handle) else { return }
        let output = links.values[index].channels.signaling.receive(payload)
        if let reply = output.reply { sendL2CAP(handle: handle, channel: .leSignaling, payload: reply.encode()) }
        if case .updateConnectionParameters(let parameters) = output.event {
            let update = LEConnectionUpdate(connectionHandle: handle, connection: LEConnectionParameters(
                connectionIntervalMin: parameters.intervalMin, connectionIntervalMax: parameters.intervalMax,
                maxLatency: parameters.latency, supervisionTimeout: parameters.timeoutMultiplier))
            enqueue(nil, .bestEffort, [.leConnectionUpdate(update)], optional: true)
        }
    }

    /// No channel is ever open, so a frame on a dynamic CID is dropped (§3.4.3).
    mutating func receiveChannelFrame(handle: UInt16, channelID: L2CAPChannelID, payload: ArraySlice<UInt8>) {}

    mutating func installChannelServices(handle: UInt16) {}
    mutating func channelsLinkDown(_ link: inout EngineLink, reason: HCIStatus) {}
    var channelDeadline: MonotonicInstant? { nil }
    mutating func advanceChannelTimers() {}

    mutating func registerChannelServer(
        _ id: HostRequestID, _ spsm: SPSM, _ parameters: CreditBasedChannelParameters, _ security: L2CAPSecurityRequirement,
        _ creditReturn: HostChannelCreditReturn, maximumChannels: Int?
    ) { complete(id, .failure(.notSupported)) }
    mutating func unregisterChannelServer(_ id: HostRequestID, _ spsm: SPSM) { complete(id, .failure(.notSupported)) }
    mutating func openChannel(
        _ id: HostRequestID, _ handle: UInt16, _ spsm: SPSM, _ parameters: CreditBasedChannelParameters,
        _ creditReturn: HostChannelCreditReturn
    ) { complete(id, .failure(.notSupported)) }
    mutating func openEnhancedChannels(
        _ id: HostRequestID, _ handle: UInt16, _ spsm: SPSM, _ count: Int, _ parameters: CreditBasedChannelParameters
    ) { complete(id, .failure(.notSupported)) }
    mutating func sendSDU(_ id: HostRequestID?, _ handle: UInt16, _ cid: UInt16, _ sdu: [UInt8]) {
        complete(id, .failure(.notSupported))
    }
    mutating func closeChannel(_ id: HostRequestID, _ handle: UInt16, _ cid: UInt16, abortive: Bool) {
        complete(id, .failure(.notSupported))
    }
    mutating func giveCredits(_ id: HostRequestID, _ handle: UInt16, _ cid: UInt16, _ credits: Int) {
        complete(id, .failure(.notSupported))
    }
    mutating func consumedSDUs(_ id: HostRequestID, _ handle: UInt16, _ cid: UInt16, _ count: Int) {
        complete(id, .failure(.notSupported))
    }
    mutating func gattOnEATT(_ id: HostRequestID, _ handle: UInt16, _ cid: UInt16, _ operation: GATTClientRequest) {
        complete(id, .failure(.notSupported))
    }
    mutating func gattOnAnyEATTBearer(_ id: HostRequestID, _ handle: UInt16, _ operation: GATTClientRequest) {
        complete(id, .failure(.notSupported))
    }
    mutating func reconfigureChannels(_ id: HostRequestID, _ handle: UInt16, _ cids: [UInt16], _ mtu: Int, _ mps: Int) {
        complete(id, .failure(.notSupported))
    }
}

#endif  // BLUEWIRE_NO_CHANNELS
