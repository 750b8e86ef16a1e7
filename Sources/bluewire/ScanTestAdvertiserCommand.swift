import ArgumentParser
import Bluewire
import BluewireCore
import BluewireHCI
import Foundation

/// `bluewire scan-test-advertiser` (hidden): makes a controller send legacy ADV_IND advertising with
/// raw HCI commands (the legacy advertising commands, or an extended advertising set with legacy
/// event properties when the controller has extended advertising), so that a scan test has a peer
/// where no other advertiser exists (the kernel VM test: Bluewire on hci1 advertises, Bluewire on
/// hci0 scans).
///
/// Not the peripheral role: no GATT server, no connection handling. Prints `ADVERTISING <address>`
/// once the controller accepted Advertising Enable, then holds the controller until --duration ends
/// or it is interrupted.
struct ScanTestAdvertiserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan-test-advertiser",
        abstract: "Advertise with raw legacy advertising commands (for scan tests).",
        shouldDisplay: false
    )

    @OptionGroup var live: LiveOptions

    @Option(help: "Complete Local Name to advertise.")
    var name = "Bluewire"

    @Option(help: ArgumentHelp("16-bit service UUID to list, like 180D; repeatable.", valueName: "uuid"))
    var uuid16: [String] = []

    @Option(help: ArgumentHelp("Manufacturer data COMPANY:HEX, like FFFF:0102.", valueName: "company:hex"))
    var manufacturer: String?

    @Option(help: ArgumentHelp("Stop after this many seconds.", valueName: "seconds"))
    var duration: Double = 30

    func advertisingData() throws -> [UInt8] {
        var elements: [ADElement] = [.flags(ADFlags(rawValue: 0x06))]
        let uuids = try uuid16.map { text in
            guard let uuid = BluetoothUUID(parsing: text) else { throw ValidationError("invalid UUID \(text)") }
            return uuid
        }
        if !uuids.isEmpty { elements.append(.serviceUUIDs(uuids, complete: true)) }
        if let manufacturer {
            let parts = manufacturer.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, let company = UInt16(parts[0], radix: 16), let payload = parseHex(parts[1]) else {
                throw ValidationError("invalid manufacturer data \(manufacturer): expected COMPANY:HEX")
            }
            elements.append(.manufacturerSpecificData(companyIdentifier: company, data: payload))
        }
        elements.append(.completeLocalName(name))
        do {
            return try AdvertisingDataBuilder.encode(elements)
        } catch {
            throw ValidationError("\(error)")
        }
    }

    func run() async throws {
        let data = try advertisingData()
        do {
            let host = try await live.startHost()
            let interrupt = ScanInterrupt { Task { await host.close() } }
            defer { interrupt.cancel() }
            guard let controller = await host.controller else { throw HostError.notRunning }
            let stop: HCICommand
            if controller.supportsExtendedAdvertising {
                stop = try await startExtended(on: host, address: controller.randomAddress, data: data)
            } else {
                stop = try await startLegacy(on: host, data: data)
            }
            FileHandle.standardOutput.write(Data("ADVERTISING \(controller.randomAddress.hexString)\n".utf8))
            try? await Task.sleep(for: .milliseconds(Int64(duration * 1000)))
            _ = try? await host.send(stop)
            await host.close()
        } catch {
            fail("\(error)")
        }
    }

    /// ADV_IND with the legacy commands (Core Vol 4 Part E §7.8.5, §7.8.7, §7.8.9), from the random
    /// static address set at bring-up (own address type 1).
    func startLegacy(on host: BluetoothHost, data: [UInt8]) async throws -> HCICommand {
        _ = try await host.send(.leSetAdvertisingParameters(LESetAdvertisingParameters(
            advertisingIntervalMin: 0x0030, advertisingIntervalMax: 0x0030, advertisingType: 0x00, ownAddressType: 0x01)))
        _ = try await host.send(.leSetAdvertisingData(LESetAdvertisingData(advertisingData: data)))
        _ = try await host.send(.leSetAdvertisingEnable(LESetAdvertisingEnable(enable: true)))
        return .leSetAdvertisingEnable(LESetAdvertisingEnable(enable: false))
    }

    /// The same ADV_IND PDUs through an extended advertising set (legacy event properties), for
    /// controllers with extended advertising: a host must not mix legacy and extended advertising
    /// commands (Core Vol 4 Part E §3.1.1), and a scanner using the extended scan commands on
    /// BlueZ's emulator only sees advertising sets. A set's random address is its own (§7.8.52).
    func startExtended(on host: BluetoothHost, address: BluetoothAddress, data: [UInt8]) async throws -> HCICommand {
        _ = try await host.send(.leSetExtendedAdvertisingParameters(LESetExtendedAdvertisingParameters(
            advertisingHandle: 0, eventProperties: [.connectable, .scannable, .legacy],
            primaryAdvertisingIntervalMin: 0x0030, primaryAdvertisingIntervalMax: 0x0030, ownAddressType: 0x01)))
        _ = try await host.send(.raw(opcode: .leSetAdvertisingSetRandomAddress, parameters: ([0x00] + address.littleEndianBytes)[...]))
        _ = try await host.send(.leSetExtendedAdvertisingData(LESetExtendedAdvertisingData(
            ExtendedAdvertisingDataFragment(advertisingHandle: 0, data: data[...]))))
        let set = LESetExtendedAdvertisingEnable.AdvertisingSet(advertisingHandle: 0)
        _ = try await host.send(.leSetExtendedAdvertisingEnable(LESetExtendedAdvertisingEnable(enable: true, sets: [set])))
        return .leSetExtendedAdvertisingEnable(LESetExtendedAdvertisingEnable(enable: false, sets: [set]))
    }
}
