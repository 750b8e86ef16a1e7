import BluewireCore

extension VirtualController {
    /// The LE features a controller reports in LE Read Local Supported Features and to peers
    /// (Core Vol 6 Part B §4.6; bit numbers are those of the FeatureSet field).
    public struct LEFeatures: OptionSet, Hashable, Sendable {
        public var rawValue: UInt64
        public init(rawValue: UInt64) { self.rawValue = rawValue }

        public static let encryption = LEFeatures(rawValue: 1 << 0)
        public static let connectionParametersRequestProcedure = LEFeatures(rawValue: 1 << 1)
        public static let extendedRejectIndication = LEFeatures(rawValue: 1 << 2)
        public static let peripheralInitiatedFeaturesExchange = LEFeatures(rawValue: 1 << 3)
        public static let ping = LEFeatures(rawValue: 1 << 4)
        public static let dataPacketLengthExtension = LEFeatures(rawValue: 1 << 5)
        public static let llPrivacy = LEFeatures(rawValue: 1 << 6)
        public static let extendedScannerFilterPolicies = LEFeatures(rawValue: 1 << 7)
        public static let le2MPHY = LEFeatures(rawValue: 1 << 8)
        public static let leCodedPHY = LEFeatures(rawValue: 1 << 11)
        public static let extendedAdvertising = LEFeatures(rawValue: 1 << 12)
        public static let periodicAdvertising = LEFeatures(rawValue: 1 << 13)
        public static let channelSelectionAlgorithm2 = LEFeatures(rawValue: 1 << 14)

        /// What the virtual controller implements: feature exchange from either role, data length
        /// extension, LE 2M and extended advertising (encryption and periodic advertising are not modelled).
        /// Add `.llPrivacy` for the resolving list (address resolution with bonded peers' IRKs).
        public static let virtualDefault: LEFeatures = [
            .peripheralInitiatedFeaturesExchange, .dataPacketLengthExtension, .le2MPHY, .extendedAdvertising,
            .channelSelectionAlgorithm2,
        ]
    }

    /// A controller's ACL data buffers: the largest packet it accepts from the host and how many it
    /// holds at once (Core Vol 4 Part E §4.1.1).
    public struct BufferSize: Hashable, Sendable {
        public var packetLength: UInt16
        public var packetCount: UInt16
        public init(packetLength: UInt16, packetCount: UInt16) {
            self.packetLength = packetLength
            self.packetCount = packetCount
        }
    }

    /// What the controller does with a command it does not support.
    public enum UnknownCommandResponse: Sendable, Hashable {
        /// Command Complete with status Unknown HCI Command (0x01), as Core Vol 4 Part E §4.5 requires.
        case commandComplete
        /// Command Status with Unknown HCI Command (0x01) (also allowed by §4.5; some controllers do this).
        case commandStatus
        /// No answer at all, like bumble's controller: the host's command timeout must fire.
        case silence
    }

    /// How ACL data from the peer is handed to this controller's host.
    public enum ACLDelivery: Sendable, Hashable {
        /// As a real link layer: one HCI packet per link-layer data PDU, each at most the connection's
        /// effective maximum payload (27 octets until the data length is raised, up to 251), with
        /// start/continuation boundary flags from the LLID.
        case linkLayerPDUs
        /// Each L2CAP PDU reassembled and delivered in one HCI packet, whatever its size, as bumble does.
        case wholeL2CAPPDUs
    }

    /// Everything that can differ between virtual controllers. The defaults describe an HCI 5.3 LE-only
    /// controller with 251-byte × 8 LE ACL buffers.
    public struct Configuration: Sendable {
        /// The public device address (Read BD_ADDR).
        public var publicAddress: BluetoothAddress
        /// HCI_Version and LMP_Version (0x0C = Core 5.3).
        public var hciVersion: UInt8 = 0x0C
        public var hciSubversion: UInt16 = 0x0001
        public var lmpSubversion: UInt16 = 0x0001
        /// Company_Identifier; 0xFFFF is the SIG's value for tests and devices without an assigned one.
        public var companyIdentifier: UInt16 = 0xFFFF
        public var leFeatures: LEFeatures = .virtualDefault
        /// LE ACL buffers (LE Read Buffer Size). `nil` reports 0 × 0, which tells the host to use the
        /// shared buffers of Read Buffer Size instead (Core Vol 4 Part E §7.8.2).
        public var leBufferSize: BufferSize? = BufferSize(packetLength: 251, packetCount: 8)
        /// ACL buffers reported by Read Buffer Size; used for LE data when `leBufferSize` is nil.
        public var aclBufferSize = BufferSize(packetLength: 251, packetCount: 8)
        /// Num_HCI_Command_Packets in every Command Complete and Command Status.
        public var numHCICommandPackets: UInt8 = 1
        public var unknownCommandResponse: UnknownCommandResponse = .commandComplete
        public var aclDelivery: ACLDelivery = .linkLayerPDUs
        /// Largest link-layer payload this controller can send and receive (LE Read Maximum Data Length).
        public var supportedMaxOctets: UInt16 = 251
        /// The suggested connInitialMaxTxOctets (27 after reset per Core Vol 6 Part B §4.5.10). Above 27,
        /// the controller runs the data length update procedure as soon as a connection is made.
        public var suggestedMaxTxOctets: UInt16 = 27
        /// Advertising sets (LE Read Number of Supported Advertising Sets).
        public var numberOfAdvertisingSets: UInt8 = 4
        /// LE Read Maximum Advertising Data Length.
        public var maximumAdvertisingDataLength: UInt16 = 1650
        /// LE Read Filter Accept List Size.
        public var filterAcceptListSize: UInt8 = 8
        /// LE Read Resolving List Size; the list exists only with the `.llPrivacy` feature.
        public var resolvingListSize: UInt8 = 8
        /// RSSI reported for everything this controller receives.
        public var rssi: Int8 = -50
        /// Transmit power on the advertising channels, dBm.
        public var advertisingTxPower: Int8 = 0
        /// Sleep clock accuracy sent to peripherals as Central_Clock_Accuracy (0x00 = 500 ppm).
        public var centralClockAccuracy: UInt8 = 0x00
        /// First connection handle allocated; later ones count up from it.
        public var firstConnectionHandle: UInt16 = 0x0040
        /// Seed of LE Rand's pseudo-random sequence (deterministic on purpose).
        public var randomSeed: UInt64
        /// LE Encrypt, LE Read Local P-256 Public Key and LE Generate DHKey (Core Vol 4 Part E §7.8.22,
        /// §7.8.36, §7.8.37), computed with swift-crypto; false leaves them out of Supported Commands and
        /// answers them Unknown HCI Command, as a controller without them does.
        public var controllerCrypto = true

        public init(publicAddress: BluetoothAddress) {
            self.publicAddress = BluetoothAddress(value: publicAddress.value, type: .public)
            self.randomSeed = publicAddress.value | 1
        }

        /// The LE ACL buffer the host must respect (LE buffers, or the shared ACL buffers).
        var effectiveLEBuffer: BufferSize { leBufferSize ?? aclBufferSize }
    }
}
