import ArgumentParser
import Bluewire
import BluewireCore
import BluewireHCI
import Foundation

/// `bluewire scan-test-advertiser` (hidden): makes a controller send legacy ADV_IND advertising (the
/// legacy advertising commands, or an extended advertising set with legacy event properties when the
/// controller has extended advertising), so that a scan test has a peer where no other advertiser
/// exists (the kernel VM test: Bluewire on hci1 advertises, Bluewire on hci0 scans).
///
/// Runs on the engine host, whose advertising procedure sends those commands; nothing else is set up
/// (no GATT database of its own). Prints `ADVERTISING <address>` once the controller accepted
/// Advertising Enable, then holds the controller until --duration ends (status 0) or SIGINT/SIGTERM
/// (status 130), and disables advertising before it closes the transport.
struct ScanTestAdvertiserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan-test-advertiser",
        abstract: "Advertise legacy ADV_IND PDUs (for scan tests).",
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

    /// The advertising data: Flags, the 16-bit UUIDs, manufacturer data and the name, checked to fit
    /// a legacy advertisement (31 octets).
    func advertisingData() throws -> [ADElement] {
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
            _ = try AdvertisingDataBuilder.encode(elements)
        } catch {
            throw ValidationError("\(error)")
        }
        return elements
    }

    /// ADV_IND PDUs (connectable, scannable, undirected) every 30 ms (0x0030 × 0.625 ms) from the
    /// random static address set at bring-up: the legacy commands (Core Vol 4 Part E §7.8.5, §7.8.7,
    /// §7.8.9), or on a controller with extended advertising an advertising set with legacy event
    /// properties, since a host must not mix the two command sets (§3.1.1) and a scanner using the
    /// extended scan commands on BlueZ's emulator only sees advertising sets (`commandSet: .legacy`).
    func advertisement() throws -> HostAdvertisement {
        HostAdvertisement(data: try advertisingData(), intervalMin: 0x0030, intervalMax: 0x0030, commandSet: .legacy)
    }

    func run() async throws {
        let advertisement = try advertisement()
        let host: EngineHost
        do {
            host = try await live.startEngineHost(connectionTimeout: .seconds(10))
        } catch {
            fail("\(error)")
        }
        let stops = ServeSignals.stopRequests()
        await host.bringUpForCommand()
        if case .failure(let error) = await host.perform(.startAdvertising(advertisement)) {
            await host.close()
            fail("\(error)")
        }
        FileHandle.standardOutput.write(Data("ADVERTISING \(await host.localAddress)\n".utf8))
        let signal = await ServeSignals.serve(until: stops) { [duration] in
            try? await Task.sleep(for: .milliseconds(Int64(duration * 1000)))
        }
        // Advertising off before the transport closes: the controller is left as found.
        _ = await finishes(within: .seconds(3)) { _ = await host.perform(.stopAdvertising) }
        await host.close()
        if signal != nil { Foundation.exit(130) }
    }
}
