import ArgumentParser
import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import Foundation

/// `bluewire gatt dump|read|write|subscribe ADDR …`: central-side GATT operations on one peripheral.
struct GATTCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatt",
        abstract: "Central-side GATT operations on a peripheral: dump, read, write, subscribe.",
        discussion: """
            Each command connects to ADDR (AA:BB:CC:DD:EE:FF for a public address, \
            AA:BB:CC:DD:EE:FF/random for a random one), exchanges ATT MTUs, discovers the database, \
            does its work and disconnects. HANDLE is 0x0003 or 3: a characteristic's value handle \
            (its declaration handle works too: it stands for the value handle) or a descriptor's handle.
            A peripheral that refuses a request for lack of security (Insufficient Encryption or \
            Authentication) is paired with, or the link encrypted with the bond in --keys, and the \
            request sent again; the pairing options are those of bluewire pair.
            """,
        subcommands: [GATTDumpCommand.self, GATTReadCommand.self, GATTWriteCommand.self, GATTSubscribeCommand.self]
    )
}

/// The peripheral to talk to and how to reach the controller: shared by every `gatt` subcommand.
struct GATTPeerOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("The peripheral: AA:BB:CC:DD:EE:FF or AA:BB:CC:DD:EE:FF/random.", valueName: "address"))
    var address: String

    @OptionGroup var live: LiveOptions

    @Option(name: .customLong("connect-timeout"), help: ArgumentHelp("Seconds to wait for the connection.", valueName: "seconds"))
    var connectTimeout: Double = 10

    var peer: BluetoothAddress {
        get throws { try parsePeerAddress(address) }
    }

    func validate() throws {
        _ = try peer
        guard connectTimeout > 0 && connectTimeout <= 3600 else { throw ValidationError("--connect-timeout must be between 0 and 3600 seconds") }
    }
}

/// An error the CLI words itself: printed as is.
struct CLIError: Error, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// SIGINT/SIGTERM while a command runs: the default action (release the controller, exit 130),
/// or what a command installs for a phase of its own (`subscribe` stops receiving and unsubscribes).
final class CommandInterrupts: @unchecked Sendable {
    private let lock = NSLock()
    private var handler: @Sendable () -> Void
    private var source: ScanInterrupt?

    init(_ handler: @escaping @Sendable () -> Void) {
        self.handler = handler
        source = nil
        source = ScanInterrupt { [weak self] in self?.fire() }
    }

    /// From now on a signal calls `handler` instead.
    func replace(_ handler: @escaping @Sendable () -> Void) {
        lock.lock(); defer { lock.unlock() }
        self.handler = handler
    }

    private func fire() {
        lock.lock()
        let handler = self.handler
        lock.unlock()
        handler()
    }

    func cancel() { source?.cancel() }
}

/// An attribute handle on the command line: `0x0003` (hex) or `3` (decimal).
struct AttributeHandle: ExpressibleByArgument, CustomStringConvertible {
    var value: UInt16

    init?(argument: String) {
        let parsed: UInt16?
        if argument.hasPrefix("0x") || argument.hasPrefix("0X") {
            parsed = UInt16(argument.dropFirst(2), radix: 16)
        } else {
            parsed = UInt16(argument)
        }
        guard let parsed, parsed != 0 else { return nil }
        value = parsed
    }

    var description: String { "0x" + hex(value, width: 4).uppercased() }

    static var defaultCompletionKind: CompletionKind { .default }
}

/// `426c7565 "Blue"`: hex, and the text too when the bytes are valid UTF-8 without control
/// characters; `(empty)` for a value of no bytes.
func describeValue(_ bytes: [UInt8], limit: Int? = nil) -> String {
    guard !bytes.isEmpty else { return "(empty)" }
    let shown = limit.map { Array(bytes.prefix($0)) } ?? bytes
    var text = hexString(shown)
    if shown.count < bytes.count { text += "… (\(bytes.count) bytes)" }
    if let string = printableText(shown) {
        text += " \"" + string + (shown.count < bytes.count ? "…" : "") + "\""
    }
    return text
}

/// The bytes as text when they are valid UTF-8 with no control characters, else nil.
func printableText(_ bytes: [UInt8]) -> String? {
    guard let string = String(validating: bytes, as: UTF8.self) else { return nil }
    guard string.unicodeScalars.allSatisfy({ !$0.properties.generalCategory.isControl }) else { return nil }
    return string
}

extension Unicode.GeneralCategory {
    fileprivate var isControl: Bool { self == .control || self == .unassigned }
}

/// A UUID as the output shows it: `0x2A00` or the 128-bit form.
func uuidText(_ uuid: BluetoothUUID) -> String { uuid.shortString }
