import BluewireCore
import BluewireHCI

/// Which role the local device (the host whose HCI traffic the capture holds) has on a link
/// (Core Vol 4 Part E §7.7.65.1, Role: 0x00 Central, 0x01 Peripheral).
public enum LinkRole: Sendable, Hashable {
    case central
    case peripheral

    public var name: String { self == .central ? "central" : "peripheral" }
}

/// The radio a connection handle belongs to, as far as the capture tells.
public enum LinkTransport: Sendable, Hashable {
    /// Opened by an LE (Enhanced) Connection Complete event, or named by an LE event.
    case le
    /// Opened by a BR/EDR Connection Complete event (Core Vol 4 Part E §7.7.3).
    case brEdr
    /// Seen only in ACL traffic: the link was set up before the capture started.
    case unknown

    public var name: String {
        switch self {
        case .le: return "LE"
        case .brEdr: return "BR/EDR"
        case .unknown: return "unknown"
        }
    }
}

/// Connection parameters as an LE Connection Complete or Connection Update Complete event reports them.
public struct ConnectionParameters: Sendable, Hashable {
    /// The capture record that reported them.
    public var recordIndex: Int
    /// Connection_Interval in units of 1.25 ms (Core Vol 4 Part E §7.7.65.1).
    public var interval: UInt16
    /// Peripheral_Latency in connection events.
    public var peripheralLatency: UInt16
    /// Supervision_Timeout in units of 10 ms.
    public var supervisionTimeout: UInt16

    @inlinable
    public init(recordIndex: Int, interval: UInt16, peripheralLatency: UInt16, supervisionTimeout: UInt16) {
        self.recordIndex = recordIndex
        self.interval = interval
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
    }

    /// The connection interval in microseconds.
    @inlinable public var intervalMicroseconds: Int64 { Int64(interval) * 1_250 }
    /// The supervision timeout in milliseconds.
    @inlinable public var supervisionTimeoutMilliseconds: Int64 { Int64(supervisionTimeout) * 10 }
}

/// An LE Data Length Change event (Core Vol 4 Part E §7.7.65.7): the largest payloads and air times the
/// link layer now uses in each direction.
public struct DataLengthChange: Sendable, Hashable {
    public var recordIndex: Int
    public var maxTxOctets: UInt16
    public var maxTxTime: UInt16
    public var maxRxOctets: UInt16
    public var maxRxTime: UInt16

    @inlinable
    public init(recordIndex: Int, maxTxOctets: UInt16, maxTxTime: UInt16, maxRxOctets: UInt16, maxRxTime: UInt16) {
        self.recordIndex = recordIndex
        self.maxTxOctets = maxTxOctets
        self.maxTxTime = maxTxTime
        self.maxRxOctets = maxRxOctets
        self.maxRxTime = maxRxTime
    }
}

/// An LE PHY Update Complete event (Core Vol 4 Part E §7.7.65.12).
public struct PHYUpdate: Sendable, Hashable {
    public var recordIndex: Int
    public var status: HCIStatus
    /// TX_PHY / RX_PHY: 0x01 LE 1M, 0x02 LE 2M, 0x03 LE Coded.
    public var txPHY: UInt8
    public var rxPHY: UInt8

    @inlinable
    public init(recordIndex: Int, status: HCIStatus, txPHY: UInt8, rxPHY: UInt8) {
        self.recordIndex = recordIndex
        self.status = status
        self.txPHY = txPHY
        self.rxPHY = rxPHY
    }

    /// "1M", "2M", "Coded", or the raw value for reserved ones.
    public static func name(ofPHY phy: UInt8) -> String {
        switch phy {
        case 0x01: return "1M"
        case 0x02: return "2M"
        case 0x03: return "Coded"
        default: return "0x" + hex(phy, width: 2)
        }
    }
}
