import BluewireCore
import BluewireHCI

/// The HCI commands that make a controller advertise an `Advertisement`, chosen from what the
/// controller supports (`ControllerInfo`), with the data encoded and checked against the PDUs used.
///
/// Built before anything is sent, so an advertisement that does not fit fails with a clear error
/// and leaves the controller as it was. The Host runs `configuration`, then `enable`; `disable` stops
/// it; after a connection stopped connectable advertising, `enable` alone starts it again.
public struct AdvertisingPlan: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// Legacy advertising commands (Core Vol 4 Part E §7.8.5–§7.8.9).
        case legacy
        /// Extended advertising commands (§7.8.53–§7.8.56) on advertising set 0, sending legacy
        /// PDUs (ADV_IND...) or extended ones (ADV_EXT_IND + AUX_ADV_IND).
        case extended(legacyPDUs: Bool)
    }

    /// The advertising set Bluewire uses with extended advertising.
    public static let advertisingHandle: UInt8 = 0
    /// Legacy PDUs carry at most 31 octets of advertising or scan response data (Core Vol 6 Part B §2.3.1).
    public static let legacyDataLimit = AdvertisingDataBuilder.legacyMaxLength
    /// Connectable extended advertising must fit its data in one AUX_ADV_IND (no AUX_CHAIN_IND,
    /// Core Vol 6 Part B §4.4.2.2); the room left there depends on the extended header fields the
    /// controller adds, so Bluewire checks a conservative 191 octets rather than let the controller
    /// refuse the data with Packet Too Long (0x45, Vol 4 Part E §7.8.54).
    public static let connectableExtendedDataLimit = 191

    public let kind: Kind
    public let isConnectable: Bool
    public let isScannable: Bool
    /// Encoded AD structures.
    public let advertisingData: [UInt8]
    public let scanResponseData: [UInt8]
    /// Parameters, address, data and scan response, in order (advertising must be disabled).
    public let configuration: [HCICommand]
    public let enable: HCICommand
    public let disable: HCICommand

    /// Plans `advertisement` for `controller`; fails if the data does not fit the PDUs chosen or a
    /// parameter is out of range.
    public init(_ advertisement: Advertisement, controller: ControllerInfo) throws(PeripheralError) {
        let extended: Bool
        var legacyPDUsOnly = false
        switch advertisement.commandSet {
        case .automatic: extended = controller.supportsExtendedAdvertising
        case .legacy:
            // Bring-up has already used extended advertising commands on such a controller, after
            // which it refuses the legacy ones until Reset (Core Vol 4 Part E §3.1.1): legacy PDUs
            // then go out through the extended commands.
            extended = controller.supportsExtendedAdvertising
            legacyPDUsOnly = true
        // Asked for explicitly: the controller's answer decides (bumble's controller implements the
        // commands without listing them in its supported-commands bitmap).
        case .extended: extended = true
        }
        let (minInterval, maxInterval) = (advertisement.intervalMin, advertisement.intervalMax)
        let intervalLimit: UInt32 = extended ? 0xFF_FFFF : 0x4000
        guard minInterval >= 0x0020, minInterval <= maxInterval, maxInterval <= intervalLimit else {
            throw .invalidAdvertisingInterval(min: minInterval, max: maxInterval)
        }
        isConnectable = advertisement.isConnectable
        let legacyData = try? AdvertisingDataBuilder.encode(advertisement.data, maxLength: Self.legacyDataLimit)
        let legacyResponse = try? AdvertisingDataBuilder.encode(advertisement.scanResponse, maxLength: Self.legacyDataLimit)

        if !extended {
            advertisingData = try Self.encode(advertisement.data, limit: Self.legacyDataLimit, scanResponse: false)
            scanResponseData = try Self.encode(advertisement.scanResponse, limit: Self.legacyDataLimit, scanResponse: true)
            // ADV_IND is connectable and scannable; a non-connectable device is scannable only when
            // it has something to answer with (ADV_SCAN_IND), else ADV_NONCONN_IND (§7.8.5).
            isScannable = advertisement.isConnectable || !scanResponseData.isEmpty
            let type: UInt8 = advertisement.isConnectable ? 0x00 : (isScannable ? 0x02 : 0x03)
            kind = .legacy
            configuration = [
                .leSetAdvertisingParameters(LESetAdvertisingParameters(
                    advertisingIntervalMin: UInt16(minInterval), advertisingIntervalMax: UInt16(maxInterval),
                    advertisingType: type, ownAddressType: 0x01)),
                .leSetAdvertisingData(LESetAdvertisingData(advertisingData: advertisingData)),
                .leSetScanResponseData(LESetScanResponseData(scanResponseData: scanResponseData)),
            ]
            enable = .leSetAdvertisingEnable(LESetAdvertisingEnable(enable: true))
            disable = .leSetAdvertisingEnable(LESetAdvertisingEnable(enable: false))
            return
        }

        var properties: LESetExtendedAdvertisingParameters.EventProperties = []
        if legacyPDUsOnly {
            _ = try Self.encode(advertisement.data, limit: Self.legacyDataLimit, scanResponse: false)
            _ = try Self.encode(advertisement.scanResponse, limit: Self.legacyDataLimit, scanResponse: true)
        }
        if advertisement.prefersLegacyPDUs || legacyPDUsOnly, let legacyData, let legacyResponse {
            advertisingData = legacyData
            scanResponseData = legacyResponse
            isScannable = advertisement.isConnectable || !legacyResponse.isEmpty
            properties.insert(.legacy)
            if advertisement.isConnectable { properties.insert(.connectable) }
            if isScannable { properties.insert(.scannable) }
            kind = .extended(legacyPDUs: true)
        } else {
            // Extended PDUs may be connectable or scannable, not both (§7.8.53).
            if advertisement.isConnectable && !advertisement.scanResponse.isEmpty { throw .scanResponseNotAllowed }
            let maximum = controller.supportsExtendedAdvertising
                ? Int(controller.maxAdvertisingDataLength) : AdvertisingDataBuilder.extendedMaxLength
            let dataLimit = advertisement.isConnectable ? min(maximum, Self.connectableExtendedDataLimit) : maximum
            advertisingData = try Self.encode(advertisement.data, limit: dataLimit, scanResponse: false)
            scanResponseData = try Self.encode(advertisement.scanResponse, limit: maximum, scanResponse: true)
            isScannable = !advertisement.isConnectable && !scanResponseData.isEmpty
            if advertisement.isConnectable { properties.insert(.connectable) }
            if isScannable { properties.insert(.scannable) }
            kind = .extended(legacyPDUs: false)
        }
        let handle = Self.advertisingHandle
        var commands: [HCICommand] = [
            .leSetExtendedAdvertisingParameters(LESetExtendedAdvertisingParameters(
                advertisingHandle: handle, eventProperties: properties,
                primaryAdvertisingIntervalMin: minInterval, primaryAdvertisingIntervalMax: maxInterval,
                ownAddressType: 0x01)),
            Self.setRandomAddress(controller.randomAddress, handle: handle),
        ]
        for fragment in Self.fragments(of: advertisingData, handle: handle) {
            commands.append(.leSetExtendedAdvertisingData(LESetExtendedAdvertisingData(fragment)))
        }
        if isScannable {
            for fragment in Self.fragments(of: scanResponseData, handle: handle) {
                commands.append(.leSetExtendedScanResponseData(LESetExtendedScanResponseData(fragment)))
            }
        }
        configuration = commands
        let set = LESetExtendedAdvertisingEnable.AdvertisingSet(advertisingHandle: handle)
        enable = .leSetExtendedAdvertisingEnable(LESetExtendedAdvertisingEnable(enable: true, sets: [set]))
        disable = .leSetExtendedAdvertisingEnable(LESetExtendedAdvertisingEnable(enable: false, sets: [set]))
    }

    /// Whether the plan uses the extended advertising commands.
    public var usesExtendedCommands: Bool {
        if case .extended = kind { return true }
        return false
    }

    static func encode(_ elements: [ADElement], limit: Int, scanResponse: Bool) throws(PeripheralError) -> [UInt8] {
        do {
            return try AdvertisingDataBuilder.encode(elements, maxLength: limit)
        } catch {
            throw .advertisingData(error, scanResponse: scanResponse)
        }
    }

    /// An own address type of 0x01 makes an advertising set use its own random address, which the
    /// host must set before enabling it (LE Set Advertising Set Random Address, §7.8.52).
    static func setRandomAddress(_ address: BluetoothAddress, handle: UInt8) -> HCICommand {
        var writer = ByteWriter(capacity: 7)
        writer.append(handle)
        writer.append(address)
        return .raw(opcode: .leSetAdvertisingSetRandomAddress, parameters: writer.bytes[...])
    }

    /// Data split into commands of at most 251 octets with their Operation: 0x03 complete, or
    /// 0x01 first, 0x00 intermediate, 0x02 last (§7.8.54). Empty data is one empty complete fragment.
    static func fragments(of data: [UInt8], handle: UInt8) -> [ExtendedAdvertisingDataFragment] {
        let size = ExtendedAdvertisingDataFragment.maxFragmentLength
        guard data.count > size else {
            return [ExtendedAdvertisingDataFragment(advertisingHandle: handle, operation: 0x03, data: data[...])]
        }
        var fragments: [ExtendedAdvertisingDataFragment] = []
        var start = 0
        while start < data.count {
            let end = min(start + size, data.count)
            let operation: UInt8 = start == 0 ? 0x01 : (end == data.count ? 0x02 : 0x00)
            fragments.append(ExtendedAdvertisingDataFragment(
                advertisingHandle: handle, operation: operation, data: data[start..<end]))
            start = end
        }
        return fragments
    }
}
