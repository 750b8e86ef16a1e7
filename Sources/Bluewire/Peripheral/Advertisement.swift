import BluewireCore
import BluewireHCI

/// What the peripheral advertises and how (Core Vol 6 Part B §4.4.2, Vol 3 Part C §9–11).
///
/// ```swift
/// let ad = try Advertisement(name: "Chat", services: [chatService])   // laid out for legacy PDUs
/// try await host.startAdvertising(ad)
/// ```
///
/// `data` and `scanResponse` are typed AD structures; `BluetoothHost.startAdvertising` encodes them for
/// the PDUs it will use and refuses, naming the structure, whatever does not fit.
public struct Advertisement: Sendable, Hashable {
    /// Which HCI commands to advertise with.
    public enum CommandSet: Sendable, Hashable {
        /// Extended advertising commands when the controller supports them (feature bit and
        /// commands), legacy ones otherwise. A host must not mix the two sets (Core Vol 4 Part E
        /// §3.1.1), and the scanning code chooses the same way.
        case automatic
        /// Legacy PDUs only (31 octets of data and of scan response): LE Set Advertising Parameters /
        /// Data / Enable (§7.8.5–§7.8.9), or, on a controller with extended advertising (whose
        /// bring-up used extended commands, after which the legacy ones are refused until Reset), the
        /// extended commands with legacy PDUs.
        case legacy
        /// LE Set Extended Advertising Parameters / Data / Enable (§7.8.53–§7.8.56).
        case extended
    }

    /// AD structures sent in every advertising PDU.
    public var data: [ADElement]
    /// AD structures sent to active scanners (scannable advertising only).
    public var scanResponse: [ADElement]
    /// Whether centrals may connect (ADV_IND / connectable extended advertising).
    public var isConnectable: Bool
    /// Advertising interval bounds in units of 0.625 ms (0x0020…0x4000 for legacy advertising).
    public var intervalMin: UInt32
    public var intervalMax: UInt32
    public var commandSet: CommandSet
    /// With extended commands, use legacy PDUs (ADV_IND, ADV_SCAN_IND, ADV_NONCONN_IND) when data and
    /// scan response fit 31 octets each, so that scanners without extended scanning see the device too.
    public var prefersLegacyPDUs: Bool
    /// Whether connectable advertising goes on while centrals are connected (several centrals at
    /// once). When false it resumes only once every central has disconnected.
    public var advertisesWhileConnected: Bool
    /// How many centrals may be connected before connectable advertising pauses; nil for no limit
    /// but the controller's.
    public var maximumConnections: Int?

    public init(
        data: [ADElement],
        scanResponse: [ADElement] = [],
        isConnectable: Bool = true,
        intervalMin: UInt32 = 0x00A0,
        intervalMax: UInt32 = 0x00A0,
        commandSet: CommandSet = .automatic,
        prefersLegacyPDUs: Bool = true,
        advertisesWhileConnected: Bool = true,
        maximumConnections: Int? = nil
    ) {
        self.data = data
        self.scanResponse = scanResponse
        self.isConnectable = isConnectable
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.commandSet = commandSet
        self.prefersLegacyPDUs = prefersLegacyPDUs
        self.advertisesWhileConnected = advertisesWhileConnected
        self.maximumConnections = maximumConnections
    }

    /// A discoverable advertisement with the device's name and service UUIDs laid out to fit legacy
    /// PDUs (and so every scanner): Flags (LE General Discoverable, BR/EDR not supported, Core
    /// Supplement Part A §1.3) and the service UUID list in the advertising data, the name there too if
    /// it fits and in the scan response otherwise, shortened (AD type Shortened Local Name) if it fits
    /// neither. UUIDs that do not fit are left out and the list marked incomplete (Supplement §1.1).
    /// `extra` structures (manufacturer data, appearance...) go wherever they fit; one that fits
    /// nowhere is an error.
    public init(
        name: String?,
        services: [BluetoothUUID] = [],
        isConnectable: Bool = true,
        extra: [ADElement] = []
    ) throws(PeripheralError) {
        let layout = try AdvertisingLayout(name: name, services: services, extra: extra)
        self.init(data: layout.data, scanResponse: layout.scanResponse, isConnectable: isConnectable)
    }
}
