import BluewireCore

extension VirtualLink {
    /// How much of the radio the link models.
    ///
    /// With `.immediate`, everything a host sends reaches its peer in the same instant of virtual time and
    /// Number Of Completed Packets comes back at once, so functional tests never need to move the clock
    /// (except for periodic advertising events, timeouts and the supervision timeout of a lost link).
    ///
    /// With `.radio(...)`, ACL data and link-layer control procedures travel in connection events: each
    /// event starts on the connection-interval grid and holds exchanges of one PDU each way (central, then
    /// peripheral, 150 µs apart), each link-layer PDU carrying at most the connection's effective payload
    /// (27 octets, up to 251 after a data length update) at the connection's PHY rate. An event ends when
    /// nothing is left to send, when `maxExchangesPerConnectionEvent` is reached, or when the next exchange
    /// would run past the next anchor. Scanners and initiators only hear advertising events that fall in
    /// their scan window, and an initiator connects at the target's next advertising event. So throughput
    /// measured over virtual time approaches the physical limits (≈ 791 kbit/s of GATT payload at 1M,
    /// ≈ 1,402 kbit/s at 2M with 244-byte notifications) in microseconds of real time.
    public struct Timing: Sendable, Hashable {
        /// When a controller tells its host that ACL packets have been sent.
        public enum CompletedPacketsReporting: Sendable, Hashable {
            /// One Number Of Completed Packets per packet, at the end of the exchange that finished it, so
            /// a host can refill its buffers within the same connection event.
            case asPacketsComplete
            /// One Number Of Completed Packets per connection event, counting every packet it finished
            /// (as controllers that report periodically do; a host then sends at most its buffer count
            /// per event).
            case atEndOfConnectionEvent
        }

        public var modelsRadio: Bool
        /// At most this many PDU exchanges per connection event (nil: as many as fit in the interval).
        public var maxExchangesPerConnectionEvent: Int?
        public var completedPacketsReporting: CompletedPacketsReporting
        /// T_IFS, the inter-frame space (Core Vol 6 Part B §4.1.1).
        public var interFrameSpace: TimeSpan = .microseconds(150)

        public init(
            modelsRadio: Bool, maxExchangesPerConnectionEvent: Int? = nil,
            completedPacketsReporting: CompletedPacketsReporting = .asPacketsComplete
        ) {
            self.modelsRadio = modelsRadio
            self.maxExchangesPerConnectionEvent = maxExchangesPerConnectionEvent
            self.completedPacketsReporting = completedPacketsReporting
        }

        /// No radio timing: everything is delivered immediately.
        public static let immediate = Timing(modelsRadio: false)

        /// Connection events, PHY rates and PDU sizes modelled in virtual time.
        public static func radio(
            maxExchangesPerConnectionEvent: Int? = nil,
            completedPacketsReporting: CompletedPacketsReporting = .asPacketsComplete
        ) -> Timing {
            Timing(
                modelsRadio: true, maxExchangesPerConnectionEvent: maxExchangesPerConnectionEvent,
                completedPacketsReporting: completedPacketsReporting)
        }

        /// Time on air of a link-layer data PDU with `payload` octets, unencrypted (Core Vol 6 Part B §2.1):
        /// preamble, access address, 2-octet header, payload and CRC at 1 Mbit/s (8 µs/octet) or 2 Mbit/s
        /// (4 µs/octet, 2-octet preamble); LE Coded S=8 with its 80 µs preamble, 256 µs access address,
        /// CI and TERM fields and 64 µs per octet.
        public static func airTime(payload: Int, phy: UInt8) -> TimeSpan {
            switch phy {
            case PHY.le2M: return .microseconds(Int64(2 + 4 + 2 + payload + 3) * 4)
            case PHY.leCoded: return .microseconds(80 + 256 + 16 + 24 + Int64(2 + payload + 3) * 64 + 24)
            default: return .microseconds(Int64(1 + 4 + 2 + payload + 3) * 8)
            }
        }
    }
}
