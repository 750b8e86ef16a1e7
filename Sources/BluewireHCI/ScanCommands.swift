import BluewireCore

/// What to scan for and how, independent of the HCI command set that carries it.
public struct ScanParameters: Hashable, Sendable {
    /// Active scanning sends scan requests, so scan responses (often holding the name) arrive too.
    public var active: Bool
    /// 0.625 ms units.
    public var interval: UInt16
    /// 0.625 ms units; at most `interval`.
    public var window: UInt16
    /// Ask the controller to drop duplicates (the aggregator de-duplicates anyway).
    public var filterDuplicates: Bool
    /// 0x01 random: the stack's own address is the random static one set at bring-up.
    public var ownAddressType: UInt8

    public init(active: Bool = true, interval: UInt16 = 0x0060, window: UInt16 = 0x0030, filterDuplicates: Bool = false, ownAddressType: UInt8 = 0x01) {
        self.active = active
        self.interval = interval
        self.window = min(window, interval)
        self.filterDuplicates = filterDuplicates
        self.ownAddressType = ownAddressType
    }
}

/// Chooses legacy or extended scan commands for a controller (Core Vol 4 Part E §3.1.1: a host
/// must not mix legacy and extended advertising commands).
public enum ScanCommands {
    /// Whether extended scan commands are used with this controller.
    public static func usesExtendedScanning(_ info: ControllerInfo) -> Bool { info.supportsExtendedScanning }

    /// The commands that set up and start scanning, in order.
    public static func start(_ parameters: ScanParameters, on info: ControllerInfo) -> [HCICommand] {
        if usesExtendedScanning(info) {
            let phy = LESetExtendedScanParameters.PHYParameters(
                active: parameters.active, scanInterval: parameters.interval, scanWindow: parameters.window)
            return [
                .leSetExtendedScanParameters(LESetExtendedScanParameters(ownAddressType: parameters.ownAddressType, le1M: phy)),
                .leSetExtendedScanEnable(LESetExtendedScanEnable(enable: true, filterDuplicates: parameters.filterDuplicates ? 1 : 0)),
            ]
        }
        return [
            .leSetScanParameters(LESetScanParameters(
                active: parameters.active, scanInterval: parameters.interval, scanWindow: parameters.window,
                ownAddressType: parameters.ownAddressType)),
            .leSetScanEnable(LESetScanEnable(enable: true, filterDuplicates: parameters.filterDuplicates)),
        ]
    }

    /// The command that stops scanning.
    public static func stop(on info: ControllerInfo) -> HCICommand {
        usesExtendedScanning(info)
            ? .leSetExtendedScanEnable(LESetExtendedScanEnable(enable: false))
            : .leSetScanEnable(LESetScanEnable(enable: false))
    }
}
