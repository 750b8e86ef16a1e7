import BluewireHCI

// Builds with BLUEWIRE_NO_STREAMS (the firmware images, scripts/firmware.sh) leave the ATT streams
// out: HostEngine+ATTStreams (sequence-numbered notifications and Write Commands sent as fast as ACL
// buffers allow, the throughput tool's load) is not compiled. These stand-ins keep the engine's
// request switch as it is; single notifications and Write Commands are unchanged.
#if BLUEWIRE_NO_STREAMS

extension HostEngine {
    /// No streams in this build: `.streamATT` fails with `.notSupported`.
    mutating func streamATT(_ id: HostRequestID, _ connection: UInt16, _ stream: ATTStream) {
        complete(id, .failure(.notSupported))
    }

    /// No stream can be running, so stopping one is done at once (as when none runs on the link).
    mutating func stopATTStream(_ id: HostRequestID, _ connection: UInt16, _ pdu: ATTStream.PDU) {
        complete(id, .success(.done))
    }

    /// No stream runs: always nil.
    public func attStreamSent(connection: UInt16, pdu: ATTStream.PDU) -> Int? { nil }

    mutating func pumpATTStreams() {}
    mutating func attStreamsLinkDown(_ connection: UInt16, reason: HCIStatus) {}
}

#endif  // BLUEWIRE_NO_STREAMS
