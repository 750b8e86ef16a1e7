import ArgumentParser
import Bluewire
import BluewireCore
import BluewireReplay
import BluewireTransport
import Foundation
import Logging
import Synchronization

/// Options every live command shares (Docs/CommandLine.md, "Conventions"): which controller to talk to, and
/// whether to record the session.
struct LiveOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "hci0 (HCI user channel), tcp:HOST:PORT, unix:PATH, serial:PATH[:BAUD], or replay:FILE. Default: $BLUEWIRE_TRANSPORT.",
        valueName: "transport"))
    var transport: String?

    @Option(name: .long, help: ArgumentHelp("Write everything that crosses the transport to this btsnoop file.", valueName: "file"))
    var capture: String?

    // `--own-address`, not `--address`: commands use `--address` for the peer (scan's filter).
    @Option(name: .customLong("own-address"), help: ArgumentHelp(
        "Random static address to use, AA:BB:CC:DD:EE:FF (default: a new one per run; pair, gatt, l2cap and serve use their bond file's local address when it has one).",
        valueName: "address"))
    var address: String?

    @Flag(name: .long, help: "Log every packet (trace level) to stderr.")
    var verbose = false

    /// The transport (with `--capture`, and a packet log with `--verbose`), as an `EngineHost`: the
    /// commands that run on the host engine (`pair`, `l2cap`, `serve`, `gatt read|write|subscribe`...). Not
    /// started. `replayable` commands run on a `replay:` transport too, their timers in the capture's
    /// time; the others refuse it (a pairing's random values never match a capture).
    /// `adjust` changes the engine's configuration (ATT_MTU, client features...) before the host is made.
    func startEngineHost(
        connectionTimeout: TimeSpan, replayable: Bool = true, adjust: (inout HostEngineConfiguration) -> Void = { _ in }
    ) async throws -> EngineHost {
        let spec = try TransportSpec.resolve(transport)
        var base: any HCITransport
        var clock: any HostClock = SystemHostClock()
        if case .replay(let path) = spec {
            // The capture is the controller; timers run in its time (as `startHost` does).
            guard replayable else { throw CLIError("this command does not run on a replay: a pairing's random values never match a capture") }
            base = try await LiveOptions.openReplay(path)
            if let replay = base as? ReplayTransport { clock = replay.hostClock }
        } else {
            do {
                base = try await spec.open()
            } catch {
                throw CLIError("cannot open \(spec): \(error)")
            }
        }
        if let capture { base = try CaptureTap(wrapping: base, path: capture) }
        if verbose {
            var logger = Logger(label: "bluewire")
            logger.logLevel = .trace
            base = PacketLogTap(wrapping: base, logger: logger)
        }
        var own = BluetoothAddress.randomStatic(UInt64.random(in: 0...0x3FFF_FFFF_FFFF))
        if let address {
            guard let parsed = BluetoothAddress(parsing: address) else {
                throw ValidationError("invalid address \(address): expected AA:BB:CC:DD:EE:FF")
            }
            own = BluetoothAddress(value: parsed.value, type: .random)
        }
        var configuration = HostEngineConfiguration(randomAddress: own)
        configuration.connectionTimeout = connectionTimeout
        // Every command offers and serves the ATT_MTU BlueZ and bumble do (the engine's own default
        // is smaller, for firmware); a command may change it (`serve --mtu`).
        configuration.preferredMTU = 517
        // Bring-up ends by clearing what a previous program left (`bringUpForCommand`), in a place on
        // the wire that does not depend on timing, so every session replays from its capture.
        configuration.clearsControllerLeftoversAtStart = true
        adjust(&configuration)
        return EngineHost(transport: base, configuration: configuration, clock: clock)
    }

    /// Whether the capture's next host packet, right after bring-up, is the scan disable with which
    /// `clearControllerLeftovers()` starts (LE Set Scan Enable 0x200C or LE Set Extended Scan Enable
    /// 0x2042, Core Vol 4 Part E §7.8.11, §7.8.65).
    static func recordedLeftoverClearing(_ replay: ReplayTransport) async -> Bool {
        guard let next = await replay.nextHostPacket?.packet, next.type == .command, next.payload.count >= 2 else { return false }
        let opcode = UInt16(next.payload[next.payload.startIndex]) | UInt16(next.payload[next.payload.startIndex + 1]) << 8
        return opcode == 0x200C || opcode == 0x2042
    }

    /// Opens `replay:FILE`: the capture acts as the controller (mismatches fail the command; packets
    /// left unsent are accepted). `bluewire replay` replaces it with a strict replay it checks afterwards.
    nonisolated(unsafe) static var openReplay: (String) async throws -> any HCITransport = { path in
        try ReplayTransport(capturePath: path)
    }
}

/// Prints a one-line error to stderr and exits non-zero (the CLI contract). Under `bluewire replay`, a
/// packet the command sent that the capture does not hold is the cause of whatever failed after it
/// (bring-up included): the mismatch is reported instead, with its record and both packets.
func fail(_ message: String) -> Never {
    let line = ReplaySession.transport?.mismatch?.description ?? message
    FileHandle.standardError.write(Data(("bluewire: " + line + "\n").utf8))
    ProcessExit.exit(1)
}

/// The replay transport `bluewire replay` opened, if any.
enum ReplaySession {
    static let opened = Mutex<ReplayTransport?>(nil)
    static var transport: ReplayTransport? { opened.withLock { $0 } }
}
