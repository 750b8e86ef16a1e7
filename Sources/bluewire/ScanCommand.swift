import ArgumentParser
import Bluewire
import BluewireCore
import BluewireHCI
import Dispatch
import Foundation

/// `bluewire scan`: discovers advertisers, merging each device's advertising data and scan response
/// and collapsing duplicates, and shows them as a live table, text lines or JSON lines.
struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Scan for LE advertisers: a live table, or JSON lines with --json.",
        discussion: """
            Each device is shown when first seen and again whenever its advertised content changes \
            (name, services, manufacturer or service data, TX power, appearance, connectability). \
            On a terminal the table is redrawn in place; otherwise one line is appended per change. \
            The scan runs for --duration seconds (exit status 0), or until interrupted. \
            A resolvable private address that a bond's IRK in the --keys file resolves is shown with \
            the bonded peer's identity address (identity=..., JSON "identity_address"), so a bonded \
            phone is recognised whatever private address it uses; the file is only read.
            """
    )

    @OptionGroup var live: LiveOptions

    @OptionGroup var keyFile: KeyFileOptions

    @Option(help: ArgumentHelp("Stop after this many seconds (default: until interrupted).", valueName: "seconds"))
    var duration: Double?

    @Flag(help: "Print one JSON object per discovered or changed device.")
    var json = false

    @Option(name: .customLong("service"), help: ArgumentHelp(
        "Only devices advertising this service UUID (16-bit like 180D, or 128-bit); repeatable, any matches.",
        valueName: "uuid"))
    var services: [String] = []

    @Option(name: .customLong("name"), help: ArgumentHelp("Only devices whose name starts with this.", valueName: "prefix"))
    var namePrefix: String?

    @Option(name: .customLong("address"), help: ArgumentHelp(
        "Only this device, AA:BB:CC:DD:EE:FF (either address type) or AA:BB:CC:DD:EE:FF/random; repeatable.",
        valueName: "address"))
    var addresses: [String] = []

    @Flag(help: "Passive scanning: send no scan requests (no scan responses arrive).")
    var passive = false

    /// The filter the options describe.
    func makeFilter() throws -> AdvertisingFilter {
        let uuids = try services.map { text in
            guard let uuid = BluetoothUUID(parsing: text) else {
                throw ValidationError("invalid service UUID \(text): expected 180D, 0x180D or a 128-bit UUID")
            }
            return uuid
        }
        let parsedAddresses = try addresses.map { text in
            guard let address = BluetoothAddress(parsing: text) else {
                throw ValidationError("invalid address \(text): expected AA:BB:CC:DD:EE:FF or AA:BB:CC:DD:EE:FF/random")
            }
            return address
        }
        return AdvertisingFilter(serviceUUIDs: uuids, namePrefix: namePrefix, addresses: parsedAddresses)
    }

    func validate() throws {
        if let duration, !(duration > 0 && duration <= 86_400) {
            throw ValidationError("--duration must be between 0 and 86400 seconds")
        }
        _ = try makeFilter()
    }

    func run() async throws {
        // `bluewire scan --json | head -1` must end quietly, not die of SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let filter = try makeFilter()
        let bonds: [HostBond]
        do {
            bonds = try ScanKeys.load(keyFile)
        } catch {
            fail("\(error)")
        }
        let host: EngineHost
        do {
            // The engine resolves private addresses with the bonds' IRKs itself; the controller's
            // resolving list is left alone (ScanKeys).
            host = try await live.startEngineHost(connectionTimeout: .seconds(10)) {
                $0.controllerAddressResolution = false
                // Cleared by its own request, after bring-up, only when a replayed capture did it.
                $0.clearsControllerLeftoversAtStart = false
            }
        } catch {
            fail("\(error)")
        }
        await ScanKeys.give(bonds, to: host)
        // From here a signal stops the scan (once it has started) instead of ending the process:
        // an interrupted scan still disables scanning, closes the transport and flushes --capture.
        let (stops, stop) = AsyncStream<Void>.makeStream()
        let interrupt = ScanInterrupt { stop.yield() }
        defer { interrupt.cancel() }
        // The scan capture in Captures/ predates the leftover clearing; its replay runs as recorded.
        await host.bringUpForCommand(oldCaptures: true)

        let output = ScanOutput(mode: json ? .json : (isatty(STDOUT_FILENO) == 1 ? .table : .lines))
        let span = duration.map { TimeSpan.microseconds(Int64(($0 * 1_000_000).rounded())) }
        let run = ScanRun(host: host, output: output)
        if let failure = await run.scan(ScanParameters(active: !passive), filter: filter, duration: span, stops: stops) {
            await host.close()
            fail(failure)
        }
        await host.close()
        output.finish(devices: run.devices)
    }
}

/// Stops the scan on SIGINT or SIGTERM, so that an interrupted scan still closes the transport and
/// flushes `--capture` instead of dying mid-write.
final class ScanInterrupt {
    private let sources: [any DispatchSourceSignal]

    init(_ handler: @escaping @Sendable () -> Void) {
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}
