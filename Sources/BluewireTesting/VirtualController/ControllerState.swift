import BluewireCore

/// One advertising set. Legacy advertising commands drive set 0; the two command families never mix
/// between resets (Core Vol 4 Part E §3.1.1), so they cannot collide.
struct AdvertisingSet {
    var handle: UInt8
    /// Advertising_Event_Properties (Core Vol 4 Part E §7.8.53): bit 0 connectable, 1 scannable,
    /// 2 directed, 3 high duty cycle, 4 legacy PDUs, 5 anonymous, 6 include TxPower.
    var properties: UInt16 = 0x0013
    /// Primary advertising interval, 0.625 ms units (legacy default 0x0800 = 1.28 s).
    var intervalMin: UInt32 = 0x0800
    var ownAddressType: UInt8 = 0
    var peerAddress = BluetoothAddress(value: 0)
    var filterPolicy: UInt8 = 0
    var txPower: Int8 = 0
    var primaryPHY: UInt8 = PHY.le1M
    var secondaryPHY: UInt8 = PHY.le1M
    var sid: UInt8 = 0
    var scanRequestNotification = false
    /// LE Set Advertising Set Random Address (extended sets only).
    var randomAddress: BluetoothAddress?
    var data: [UInt8] = []
    var scanResponseData: [UInt8] = []
    /// Data being assembled from First/Intermediate fragments of LE Set Extended Advertising Data.
    var partialData: [UInt8]?
    var partialScanResponseData: [UInt8]?
    /// The ADI's Advertising Data ID: changes whenever the data changes, so duplicate filters let it through.
    var dataID: UInt16 = 0
    var enabled = false
    /// Bumped on every enable and disable so that timers of an earlier run are ignored.
    var generation: UInt64 = 0
    var maxEvents: Int = 0
    var eventCount: Int = 0

    init(handle: UInt8) { self.handle = handle }

    var isConnectable: Bool { properties & 0x01 != 0 }
    var isScannable: Bool { properties & 0x02 != 0 }
    var isDirected: Bool { properties & 0x04 != 0 }
    var isHighDutyCycle: Bool { properties & 0x08 != 0 }
    var isLegacyPDU: Bool { properties & 0x10 != 0 }
    var isAnonymous: Bool { properties & 0x20 != 0 }
    var includesTxPower: Bool { properties & 0x40 != 0 }

    /// The interval between advertising events. High duty cycle directed advertising repeats every 3.75 ms
    /// at most (Core Vol 6 Part B §4.4.2.4.2).
    var interval: TimeSpan {
        if isHighDutyCycle && isDirected { return .microseconds(3_750) }
        return .microseconds(Int64(max(intervalMin, 0x20)) * Units.advertisingSlot)
    }
}

/// Scan parameters, from LE Set Scan Parameters or the 1M (else Coded) block of LE Set Extended Scan Parameters.
struct ScanParameters {
    var active = false
    /// 0.625 ms units (defaults 0x0010 = 10 ms, Core Vol 4 Part E §7.8.10).
    var interval: UInt32 = 0x10
    var window: UInt32 = 0x10
    var ownAddressType: UInt8 = 0
    var filterPolicy: UInt8 = 0
}

/// Scanning in progress.
struct ScanState {
    var isExtended: Bool
    var filterDuplicates: UInt8
    var seen: Set<DuplicateKey> = []
    var startedAt: MonotonicInstant
    var generation: UInt64
    /// Extended scanning: scanning stops after `duration` (restarting every `period` if set).
    var duration: TimeSpan?
    var period: TimeSpan?
    /// Between the end of a duration and the start of the next period.
    var isPaused = false
}

/// What makes two advertising reports duplicates (Core Vol 6 Part B §4.4.3.5: same advertiser, same kind
/// of PDU and, with an ADI, the same SID and DID).
struct DuplicateKey: Hashable {
    var address: UInt64
    var addressType: UInt8
    var isScanResponse: Bool
    var sid: UInt8
    var dataID: UInt16
}

/// A pending LE Create Connection or LE Extended Create Connection.
struct Initiator {
    var isExtended: Bool
    var filterPolicy: UInt8
    var peerAddress: BluetoothAddress
    var ownAddressType: UInt8
    var scanInterval: UInt32
    var scanWindow: UInt32
    var connectionIntervalMin: UInt16
    var maxLatency: UInt16
    var supervisionTimeout: UInt16
    var startedAt: MonotonicInstant
}

/// Which advertising command family the host has used since reset.
enum CommandFamily { case undetermined, legacy, extended }

/// Everything one virtual controller knows. Only `LinkWorld` touches it, under the link's lock.
final class ControllerState {
    let index: Int
    var configuration: VirtualController.Configuration
    /// Event_Mask after reset (Core Vol 4 Part E §7.3.1): everything up to bit 44, LE Meta (bit 61) off.
    static let defaultEventMask: UInt64 = 0x0000_1FFF_FFFF_FFFF
    /// LE_Event_Mask after reset (Core Vol 4 Part E §7.8.1): subevents 0x01–0x05.
    static let defaultLEEventMask: UInt64 = 0x0000_0000_0000_001F
    var eventMask = ControllerState.defaultEventMask
    var leEventMask = ControllerState.defaultLEEventMask
    var randomAddress: BluetoothAddress?
    var commandFamily = CommandFamily.undetermined
    var advertisingSets: [UInt8: AdvertisingSet] = [:]
    var scanParameters = ScanParameters()
    var scan: ScanState?
    var scanGeneration: UInt64 = 0
    var initiator: Initiator?
    var acceptList: [BluetoothAddress] = []
    /// LE Add Device To Resolving List's entries, in order (ResolvingList.swift).
    var resolvingList: [ResolvingListEntry] = []
    /// LE Set Address Resolution Enable.
    var addressResolutionEnabled = false
    /// Connection_Handle → link connection id.
    var connections: [UInt16: Int] = [:]
    /// Handles this controller ended with Disconnection Complete → how many more ACL packets its host
    /// may still send on each before it can have read that event (see `LinkWorld.close`).
    var lateACLAllowance: [UInt16: Int] = [:]
    /// ACL packets that arrived on an ended handle within its allowance, dropped as a controller drops
    /// them (oldest first).
    var lateACLPackets: [VirtualController.LateACLPacket] = []
    var aclBuffersInUse = 0
    var suggestedMaxTxOctets: UInt16
    /// LE Set Default PHY: ALL_PHYS, TX_PHYS, RX_PHYS (no preference until set).
    var defaultPHYs: (all: UInt8, tx: UInt8, rx: UInt8) = (0x03, 0, 0)
    var randomState: UInt64
    /// The P-256 private key of the last LE Read Local P-256 Public Key (CryptoCommands).
    var p256PrivateKey: [UInt8]?
    var faults = VirtualController.Faults()
    var violations: [VirtualController.HostViolation] = []
    var violationHandler: (@Sendable (VirtualController.HostViolation) -> Void)?
    var outbox: [HCIPacket] = []
    var sink: (@Sendable (HCIPacket) -> Void)?

    init(index: Int, configuration: VirtualController.Configuration) {
        self.index = index
        self.configuration = configuration
        self.suggestedMaxTxOctets = configuration.suggestedMaxTxOctets
        self.randomState = configuration.randomSeed
    }

    /// Returns the controller to its power-on state (HCI_Reset), keeping configuration, faults and the
    /// record of host violations.
    func reset() {
        eventMask = Self.defaultEventMask
        leEventMask = Self.defaultLEEventMask
        randomAddress = nil
        commandFamily = .undetermined
        advertisingSets = [:]
        scanParameters = ScanParameters()
        scan = nil
        scanGeneration &+= 1
        initiator = nil
        acceptList = []
        resolvingList = []
        addressResolutionEnabled = false
        connections = [:]
        lateACLAllowance = [:]
        aclBuffersInUse = 0
        suggestedMaxTxOctets = configuration.suggestedMaxTxOctets
        defaultPHYs = (0x03, 0, 0)
    }

    // MARK: addresses and features

    var supports: VirtualController.LEFeatures { configuration.leFeatures }

    /// The PHY bit mask (bit 0 1M, bit 1 2M, bit 2 Coded) this controller can use.
    var supportedPHYMask: UInt8 {
        var mask: UInt8 = 0x01
        if supports.contains(.le2MPHY) { mask |= 0x02 }
        if supports.contains(.leCodedPHY) { mask |= 0x04 }
        return mask
    }

    /// The address used on air for an Own_Address_Type (0/2 public, 1/3 random: no resolving list is
    /// modelled, so the RPA variants fall back to the identity as the spec allows when the list is empty).
    func ownAddress(type: UInt8, setRandomAddress: BluetoothAddress? = nil, isExtendedSet: Bool = false) -> BluetoothAddress? {
        if type & 0x01 == 0 { return configuration.publicAddress }
        let random = isExtendedSet ? setRandomAddress : randomAddress
        return random.map { BluetoothAddress(value: $0.value, type: .random) }
    }

    /// The advertiser address of a set, if it has one it can use.
    func advertisingAddress(of set: AdvertisingSet) -> BluetoothAddress? {
        ownAddress(type: set.ownAddressType, setRandomAddress: set.randomAddress, isExtendedSet: commandFamily == .extended)
    }

    func isInAcceptList(_ address: BluetoothAddress) -> Bool {
        acceptList.contains { $0.value == address.value && $0.type.isRandom == address.type.isRandom }
    }

    /// The lowest free handle from the configured first one (Connection_Handle is 12 bits, up to 0x0EFF).
    func allocateHandle() -> UInt16? {
        var handle = configuration.firstConnectionHandle
        while handle <= 0x0EFF {
            if connections[handle] == nil { return handle }
            handle += 1
        }
        return nil
    }

    /// splitmix64: a deterministic stream for LE Rand.
    func nextRandom() -> UInt64 {
        randomState &+= 0x9E37_79B9_7F4A_7C15
        var z = randomState
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    // MARK: output to the host

    /// Hands a packet to the host: to the sink if one is attached, else to the outbox.
    func send(_ packet: HCIPacket) {
        guard !faults.isUnresponsive else { return }
        if let sink { sink(packet) } else { outbox.append(packet) }
    }

    /// Sends an event unless the Event_Mask masks it. Command Complete, Command Status and Number Of
    /// Completed Packets cannot be masked (Core Vol 4 Part E §7.3.1); for the others the mask bit is the
    /// event code minus one.
    func sendEvent(_ code: UInt8, _ parameters: [UInt8]) {
        switch code {
        case EventCode.commandComplete, EventCode.commandStatus, EventCode.numberOfCompletedPackets:
            break
        default:
            guard eventMask & (1 << UInt64(code - 1)) != 0 else { return }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(2 + parameters.count)
        bytes.append(code)
        bytes.append(UInt8(truncatingIfNeeded: parameters.count))
        bytes.append(contentsOf: parameters)
        send(HCIPacket(type: .event, payload: bytes))
    }

    /// Sends an LE Meta event if both the Event_Mask (bit 61) and the LE_Event_Mask (bit subevent − 1) allow it.
    func sendLEMeta(_ subevent: UInt8, _ parameters: [UInt8]) {
        guard isLEEventEnabled(subevent) else { return }
        sendEvent(EventCode.leMeta, [subevent] + parameters)
    }

    func isLEEventEnabled(_ subevent: UInt8) -> Bool {
        eventMask & (1 << 61) != 0 && leEventMask & (1 << UInt64(subevent - 1)) != 0
    }

    func commandComplete(_ opcode: UInt16, _ returnParameters: [UInt8]) {
        var parameters: [UInt8] = [configuration.numHCICommandPackets, UInt8(opcode & 0xFF), UInt8(opcode >> 8)]
        parameters.append(contentsOf: returnParameters)
        sendEvent(EventCode.commandComplete, parameters)
    }

    func commandStatus(_ opcode: UInt16, _ status: UInt8) {
        sendEvent(EventCode.commandStatus, [status, configuration.numHCICommandPackets, UInt8(opcode & 0xFF), UInt8(opcode >> 8)])
    }

    func record(_ violation: VirtualController.HostViolation) {
        violations.append(violation)
        violationHandler?(violation)
    }
}
