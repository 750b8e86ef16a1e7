import ArgumentParser
import Bluewire
import Foundation
import Logging

/// The options every example takes: which controller, which address, whether to record.
public struct ExampleOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "hci0, tcp:HOST:PORT, unix:PATH or serial:PATH[:BAUD]. Default: $BLUEWIRE_TRANSPORT.", valueName: "transport"))
    public var transport: String?

    // As the bluewire CLI spells it: `--address` would read as the peer's.
    @Option(name: .customLong("own-address"), help: ArgumentHelp("Random static address to use, AA:BB:CC:DD:EE:FF (default: a new one).", valueName: "address"))
    public var address: String?

    @Option(name: .long, help: ArgumentHelp("Write everything that crosses the transport to this btsnoop file.", valueName: "file"))
    public var capture: String?

    @Flag(name: .long, help: "Log every packet (trace level) to stderr.")
    public var verbose = false

    public init() {}

    /// Opens the transport and brings the controller up; a failure ends the program with one line
    /// on stderr.
    public func startHost() async -> BluetoothHost {
        do {
            var transport = try await TransportSpec.resolve(self.transport).open()
            if let capture { transport = try CaptureTap(wrapping: transport, path: capture) }
            var configuration = HostConfiguration()
            if let address {
                guard let parsed = BluetoothAddress(parsing: address) else { exitWithError("invalid address \(address)") }
                configuration.randomAddress = BluetoothAddress(value: parsed.value, type: .random)
            }
            var logger = Logger(label: "example")
            logger.logLevel = verbose ? .trace : .warning
            let host = BluetoothHost(transport: transport, configuration: configuration, logger: logger)
            // start() also clears what a killed program may have left on the controller (scanning,
            // advertising, a pending connection attempt), which a Reset does not on every controller
            // (bumble's): HostConfiguration.clearsControllerLeftoversAtStart.
            try await host.start()
            return host
        } catch {
            exitWithError("\(error)")
        }
    }
}

/// Writes one line to standard output at once (unbuffered, so a reader on a pipe sees it now).
public func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// One line on stderr, exit status 1.
public func exitWithError(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("error: " + message + "\n").utf8))
    exit(1)
}
