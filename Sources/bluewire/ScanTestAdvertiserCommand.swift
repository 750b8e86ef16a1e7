import ArgumentParser
import Bluewire
import BluewireCore
import BluewireHCI
import Foundation

/// `bluewire scan-test-advertiser` (hidden): makes a controller advertise with the raw legacy
/// advertising commands (Core Vol 4 Part E §7.8.5–§7.8.9), so that a scan test has a peer where no
/// other advertiser exists (the kernel VM test: Bluewire on hci1 advertises, Bluewire on hci0 scans).
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
            // ADV_IND from the random static address set at bring-up (own address type 1).
            _ = try await host.send(.leSetAdvertisingParameters(LESetAdvertisingParameters(
                advertisingIntervalMin: 0x0030, advertisingIntervalMax: 0x0030, advertisingType: 0x00, ownAddressType: 0x01)))
            _ = try await host.send(.leSetAdvertisingData(LESetAdvertisingData(advertisingData: data)))
            _ = try await host.send(.leSetAdvertisingEnable(LESetAdvertisingEnable(enable: true)))
            let address = await host.controller?.randomAddress.hexString ?? "?"
            FileHandle.standardOutput.write(Data("ADVERTISING \(address)\n".utf8))
            try? await Task.sleep(for: .milliseconds(Int64(duration * 1000)))
            _ = try? await host.send(.leSetAdvertisingEnable(LESetAdvertisingEnable(enable: false)))
            await host.close()
        } catch {
            fail("\(error)")
        }
    }
}
