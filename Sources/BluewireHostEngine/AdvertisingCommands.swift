import BluewireCore
import BluewireHCI

/// The HCI commands that configure, enable and disable one advertisement on one controller: the
/// legacy set (§7.8.5-9) or, where the controller has them, the extended set (§7.8.53-56) with
/// advertising handle 0. Same decisions as the `BluetoothHost` actor's `AdvertisingPlan`.
struct AdvertisingCommands: Hashable, Sendable {
    static let advertisingHandle: UInt8 = 0
    static let legacyDataLimit = AdvertisingDataBuilder.legacyMaxLength
    static let connectableExtendedDataLimit = 191

    var isConnectable: Bool
    var usesExtendedCommands: Bool
    /// The address advertised from when it is not the static random address (a private address).
    var ownAddress: BluetoothAddress?
    var configuration: [HCICommand]
    /// The command set, PDUs and encoded data chosen.
    var layout: HostAdvertisingLayout
    var enable: HCICommand
    var disable: HCICommand

    init(_ advertisement: HostAdvertisement, controller: ControllerInfo, ownAddress: BluetoothAddress? = nil) throws(HostEngineError) {
        self.ownAddress = ownAddress
        let extended: Bool
        var legacyPDUsOnly = false
        switch advertisement.commandSet {
        case .automatic: extended = controller.supportsExtendedAdvertising
        case .legacy:
            // After bring-up used extended commands the controller refuses legacy ones until Reset
            // (Core Vol 4 Part E §3.1.1): legacy PDUs then go out through the extended commands.
            extended = controller.supportsExtendedAdvertising
            legacyPDUsOnly = true
        case .extended: extended = true
        }
        let (minInterval, maxInterval) = (advertisement.intervalMin, advertisement.intervalMax)
        let intervalLimit: UInt32 = extended ? 0xFF_FFFF : 0x4000
        guard minInterval >= 0x0020, minInterval <= maxInterval, maxInterval <= intervalLimit else {
            throw .invalidAdvertisingInterval
        }
        isConnectable = advertisement.isConnectable
        usesExtendedCommands = extended
        if !extended {
            let data = try Self.encode(advertisement.data, limit: Self.legacyDataLimit)
            let response = try Self.encode(advertisement.scanResponse, limit: Self.legacyDataLimit)
            // ADV_IND is connectable and scannable; otherwise ADV_SCAN_IND if there is a scan
            // response, else ADV_NONCONN_IND (§7.8.5).
            let scannable = advertisement.isConnectable || !response.isEmpty
            let type: UInt8 = advertisement.isConnectable ? 0x00 : (scannable ? 0x02 : 0x03)
            // The legacy controller's one random address is what it advertises from (§7.8.4).
            configuration = ownAddress.map { [.leSetRandomAddress(LESetRandomAddress(randomAddress: $0))] } ?? []
            configuration += [
                .leSetAdvertisingParameters(LESetAdvertisingParameters(
                    advertisingIntervalMin: UInt16(minInterval), advertisingIntervalMax: UInt16(maxInterval),
                    advertisingType: type, ownAddressType: 0x01)),
                .leSetAdvertisingData(LESetAdvertisingData(advertisingData: data)),
                .leSetScanResponseData(LESetScanResponseData(scanResponseData: response)),
            ]
            layout = HostAdvertisingLayout(kind: .legacy, advertisingData: data, scanResponseData: response)
            enable = .leSetAdvertisingEnable(LESetAdvertisingEnable(enable: true))
            disable = .leSetAdvertisingEnable(LESetAdvertisingEnable(enable: false))
            return
        }
        var properties: LESetExtendedAdvertisingParameters.EventProperties = []
        let data: [UInt8]
        let response: [UInt8]
        let scannable: Bool
        // Preferred: legacy PDUs when both fit 31 octets, extended ones otherwise.
        let legacyFits = advertisement.prefersLegacyPDUs
            && (try? Self.encode(advertisement.data, limit: Self.legacyDataLimit)) != nil
            && (try? Self.encode(advertisement.scanResponse, limit: Self.legacyDataLimit)) != nil
        if legacyPDUsOnly || legacyFits {
            data = try Self.encode(advertisement.data, limit: Self.legacyDataLimit)
            response = try Self.encode(advertisement.scanResponse, limit: Self.legacyDataLimit)
            scannable = advertisement.isConnectable || !response.isEmpty
            properties.insert(.legacy)
            if advertisement.isConnectable { properties.insert(.connectable) }
            if scannable { properties.insert(.scannable) }
        } else {
            // Extended PDUs may be connectable or scannable, not both (§7.8.53).
            if advertisement.isConnectable && !advertisement.scanResponse.isEmpty { throw .scanResponseNotAllowed }
            let maximum = controller.supportsExtendedAdvertising
                ? Int(controller.maxAdvertisingDataLength) : AdvertisingDataBuilder.extendedMaxLength
            let limit = advertisement.isConnectable ? min(maximum, Self.connectableExtendedDataLimit) : maximum
            data = try Self.encode(advertisement.data, limit: limit)
            response = try Self.encode(advertisement.scanResponse, limit: maximum)
            scannable = !advertisement.isConnectable && !response.isEmpty
            if advertisement.isConnectable { properties.insert(.connectable) }
            if scannable { properties.insert(.scannable) }
        }
        let handle = Self.advertisingHandle
        var writer = ByteWriter(capacity: 7)
        writer.append(handle)
        writer.append(ownAddress ?? controller.randomAddress)
        var commands: [HCICommand] = [
            .leSetExtendedAdvertisingParameters(LESetExtendedAdvertisingParameters(
                advertisingHandle: handle, eventProperties: properties,
                primaryAdvertisingIntervalMin: minInterval, primaryAdvertisingIntervalMax: maxInterval,
                ownAddressType: 0x01)),
            .raw(opcode: .leSetAdvertisingSetRandomAddress, parameters: writer.bytes[...]),
        ]
        for fragment in Self.fragments(of: data, handle: handle) {
            commands.append(.leSetExtendedAdvertisingData(LESetExtendedAdvertisingData(fragment)))
        }
        if scannable {
            for fragment in Self.fragments(of: response, handle: handle) {
                commands.append(.leSetExtendedScanResponseData(LESetExtendedScanResponseData(fragment)))
            }
        }
        configuration = commands
        layout = HostAdvertisingLayout(
            kind: .extended(legacyPDUs: properties.contains(.legacy)), advertisingData: data, scanResponseData: response)
        let set = LESetExtendedAdvertisingEnable.AdvertisingSet(advertisingHandle: handle)
        enable = .leSetExtendedAdvertisingEnable(LESetExtendedAdvertisingEnable(enable: true, sets: [set]))
        disable = .leSetExtendedAdvertisingEnable(LESetExtendedAdvertisingEnable(enable: false, sets: [set]))
    }

    static func encode(_ elements: [ADElement], limit: Int) throws(HostEngineError) -> [UInt8] {
        do {
            return try AdvertisingDataBuilder.encode(elements, maxLength: limit)
        } catch {
            throw .advertisingData(error)
        }
    }

    /// Extended data goes out in fragments of at most 251 octets (§7.8.54: Operation 1 first,
    /// 0 intermediate, 2 last, 3 complete).
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
            fragments.append(ExtendedAdvertisingDataFragment(advertisingHandle: handle, operation: operation, data: data[start..<end]))
            start = end
        }
        return fragments
    }
}
