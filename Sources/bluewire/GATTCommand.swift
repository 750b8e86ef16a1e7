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
            (its declaration handle works too) or a descriptor's handle.
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
        get throws {
            guard let parsed = BluetoothAddress(parsing: address) else {
                throw ValidationError("invalid address \(address): expected AA:BB:CC:DD:EE:FF or AA:BB:CC:DD:EE:FF/random")
            }
            return parsed
        }
    }

    func validate() throws {
        _ = try peer
        guard connectTimeout > 0 && connectTimeout <= 3600 else { throw ValidationError("--connect-timeout must be between 0 and 3600 seconds") }
    }

    /// Starts the Host, connects, exchanges MTUs and discovers the whole database, runs `body`, then
    /// disconnects and closes the Host (flushing `--capture`) whatever happened. Failures end the
    /// process with one line on stderr and status 1.
    func withPeripheral(_ body: (GATTClient, [GATTDiscoveredService]) async throws -> Void) async {
        let host: BluetoothHost
        do {
            host = try await live.startHost()
        } catch {
            fail("\(error)")
        }
        do {
            let peer = try self.peer
            let connection = try await host.connect(
                to: peer, timeout: .microseconds(Int64((connectTimeout * 1_000_000).rounded())))
            let gatt = await connection.gatt
            // A server may refuse the exchange (Request Not Supported); 23 octets then.
            _ = try? await gatt.exchangeMTU()
            let services = try await gatt.discoverAll()
            try await body(gatt, services)
            if await connection.isConnected { try? await connection.disconnect() }
        } catch {
            await host.close()
            fail("\(error)")
        }
        await host.close()
    }
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

extension [GATTDiscoveredService] {
    /// The characteristic whose value (or declaration) is at `handle`.
    func characteristic(at handle: UInt16) -> GATTDiscoveredCharacteristic? {
        for service in self {
            if let found = service.characteristics.first(where: { $0.characteristic.valueHandle == handle || $0.characteristic.handle == handle }) {
                return found
            }
        }
        return nil
    }

    /// The descriptor at `handle`, with its characteristic.
    func descriptor(at handle: UInt16) -> (GATTDiscoveredCharacteristic, GATTDescriptor)? {
        for service in self {
            for item in service.characteristics {
                if let descriptor = item.descriptors.first(where: { $0.handle == handle }) { return (item, descriptor) }
            }
        }
        return nil
    }
}

/// `426c7565 "Blue"`: hex, and the text too when every byte is printable ASCII.
func describeValue(_ bytes: [UInt8], limit: Int? = nil) -> String {
    let shown = limit.map { Array(bytes.prefix($0)) } ?? bytes
    var text = hexString(shown)
    if shown.count < bytes.count { text += "… (\(bytes.count) bytes)" }
    if !bytes.isEmpty, bytes.allSatisfy({ (0x20...0x7E).contains($0) }) {
        text += " \"" + String(decoding: shown, as: UTF8.self) + (shown.count < bytes.count ? "…" : "") + "\""
    }
    return text
}

/// A UUID as the output shows it: `0x2A00` or the 128-bit form.
func uuidText(_ uuid: BluetoothUUID) -> String { uuid.shortString }
