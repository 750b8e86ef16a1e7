import ArgumentParser
import Bluewire
import BluewireCore
import BluewireSnoop
import BluewireReplay
import BluewireTransport
import Glibc
import Synchronization

/// `bluewire replay FILE -- <command...>`: runs a live bluewire command in this process with
/// `--transport replay:FILE`, the capture acting as the controller, strictly.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Run a bluewire command against a capture acting as the controller, strictly.",
        discussion: """
            Example: bluewire replay session.btsnoop -- scan --duration 5

            The command runs as if given --transport replay:FILE. Every packet it sends must match the \
            capture (HCI commands in order per opcode, ACL in order per connection handle); the \
            controller's packets are delivered in capture order as soon as the host has sent what precedes \
            them (or, with --capture-pace, no sooner than the capture's own timing). Unless the command \
            gives --own-address, the random address the capture's host set is used again. The replay fails \
            (status 1, the record index and an expected/actual hex diff on stderr) when a packet differs, \
            and, unless --lenient, when the command ends without sending every packet of the capture.
            """
    )

    @Argument(help: "The capture to replay (btsnoop or pcapng; e.g. one written with --capture).")
    var file: String

    @Flag(help: "Accept a command that ends before sending every host packet of the capture.")
    var lenient = false

    @Flag(name: .customLong("capture-pace"), help: "Deliver controller packets no sooner than the capture's timestamps.")
    var capturePace = false

    @Argument(parsing: .postTerminator, help: "The bluewire command to run, after --.")
    var command: [String] = []

    func validate() throws {
        guard let first = command.first else {
            throw ValidationError("give the command to run after --, e.g. bluewire replay FILE -- scan")
        }
        guard first != Self.configuration.commandName else { throw ValidationError("cannot replay a replay") }
        if command.contains(where: { $0 == "--transport" || $0.hasPrefix("--transport=") }) {
            throw ValidationError("the command must not give --transport: replay supplies replay:\(file)")
        }
    }

    func run() async throws {
        // The capture is read as the replay goes (`ReplayScript(capturePath:)`), never held whole: the
        // check below reads it through once, a record at a time, and finds the recorded address.
        let recordedAddress: BluetoothAddress?
        do throws(CaptureFileError) {
            try ReplayCaptureFile.check(path: file)
            recordedAddress = try Self.recordedRandomAddress(path: file)
        } catch {
            fail(error.description)
        }
        var arguments = command
        var injected = ["--transport", "replay:" + file]
        if !arguments.contains(where: { $0 == "--own-address" || $0.hasPrefix("--own-address=") }),
           let address = recordedAddress {
            injected += ["--own-address", address.hexString]
        }
        arguments.insert(contentsOf: injected, at: Self.optionsIndex(arguments))


        // Inbound stays open once the capture is exhausted: the command ends on its own terms (or on
        // the signal below), never on a controller that seems to vanish.
        let options = ReplayTransport.Options(
            pacing: capturePace ? .capturePace(SystemHostClock()) : .hostDriven, strict: !lenient, finishWhenExhausted: false)
        LiveOptions.openReplay = { path in
            let transport = try ReplayTransport(capturePath: path, options: options)
            // A command the recording stopped with a signal (serve) gets the same signal here, once the
            // host has nothing left to do but the capture still expects its shutdown.
            // Process-directed: the cooperative pool's threads block signals, so raise() would stay pending.
            await transport.onIdle { _ = kill(getpid(), SIGINT) }
            ReplaySession.opened.withLock { $0 = transport }
            return transport
        }

        var subcommand: any ParsableCommand
        do {
            subcommand = try BluewireCommand.parseAsRoot(arguments)
        } catch {
            if BluewireCommand.message(for: error).contains("--transport") {
                fail("'\(command.joined(separator: " "))' takes no --transport: replay runs live commands (scan, gatt, serve, throughput)")
            }
            ProcessExit.exit(withError: error)
        }
        do {
            if var asynchronous = subcommand as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try subcommand.run()
            }
        } catch {
            if let transport = ReplaySession.opened.withLock({ $0 }), let failure = await transport.failure {
                fail(failure.description)
            }
            ProcessExit.exit(withError: error)
        }
        guard let transport = ReplaySession.opened.withLock({ $0 }) else {
            fail("'\(command.joined(separator: " "))' never opened the transport: replay runs live commands (scan, gatt, serve, throughput)")
        }
        await transport.close()
        do {
            try await transport.verify()
        } catch {
            fail(error.description)
        }
    }

    /// Where the injected options go: right after the (sub)command names, so they belong to the command
    /// that declares them and stay clear of any `--` the command itself uses.
    static func optionsIndex(_ arguments: [String]) -> Int {
        var type: any ParsableCommand.Type = BluewireCommand.self
        var index = 0
        while index < arguments.count,
              let next = type.configuration.subcommands.first(where: { $0.configuration.commandName == arguments[index] }) {
            type = next
            index += 1
        }
        return index
    }

    /// The address of the capture's first LE Set Random Address (Core Vol 4 Part E §7.8.4): a live
    /// command must set the same one for its commands to match. Reads the capture up to that command.
    static func recordedRandomAddress(path: String) throws(CaptureFileError) -> BluetoothAddress? {
        let reader = try CaptureFileReader(path: path)
        while let record = try reader.next() {
            guard record.direction == .hostToController, let packet = record.packet, packet.type == .command else { continue }
            let p = packet.payload
            guard p.count == 9, p[p.startIndex] == 0x05, p[p.startIndex + 1] == 0x20, p[p.startIndex + 2] == 6 else { continue }
            var value: UInt64 = 0
            for k in (0..<6).reversed() { value = value << 8 | UInt64(p[p.startIndex + 3 + k]) }
            return BluetoothAddress(value: value, type: .random)
        }
        return nil
    }
}
