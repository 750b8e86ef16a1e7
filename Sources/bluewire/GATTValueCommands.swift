import ArgumentParser
import Bluewire
import BluewireAnalysis
import BluewireCore
import BluewireGATT
import Foundation

/// `bluewire gatt read ADDR HANDLE [--long]`: one value, as hex (and text when printable).
struct GATTReadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Read a characteristic value or descriptor.",
        discussion: """
            Reads the whole value: a Read Request, then, while the answers come back full \
            (ATT_MTU − 1 bytes), Read Blob Requests (Read Long Characteristic Values). A value is \
            never cut silently: with --single only the Read Request is sent, and a full answer is \
            reported on stderr as possibly cut.
            """
    )

    @OptionGroup var peripheral: GATTPeerOptions

    @Argument(help: ArgumentHelp("The value or descriptor handle: 0x0003 or 3.", valueName: "handle"))
    var handle: AttributeHandle

    // The default since values are never cut silently; kept so that existing scripts run.
    @Flag(help: ArgumentHelp("Read the whole value (the default).", visibility: .hidden))
    var long = false

    @Flag(help: "Send one Read Request only (no Read Blob): at most ATT_MTU − 1 bytes.")
    var single = false

    @Flag(help: "Print one JSON object: handle, UUID, value.")
    var json = false

    @OptionGroup(title: "Security (when the peripheral asks for it)") var security: GATTSecurityOptions

    func run() async throws {
        await peripheral.withEnginePeripheral(security: security) { gatt, services, _ in
            let target = services.valueHandle(for: handle.value)
            let mtu = await gatt.exchangedMTU
            let value = try await gatt.read(target, long: !single)
            if single, value.count >= mtu - 1 {
                FileHandle.standardError.write(Data("bluewire: note: the value fills the Read Response (ATT_MTU − 1 = \(value.count) bytes) and may be longer: read it without --single\n".utf8))
            }
            let uuid = services.characteristic(at: target)?.characteristic.uuid ?? services.descriptor(at: target)?.uuid
            if json {
                var w = JSONWriter()
                w.beginObject()
                w.field("handle", "0x" + hex(target, width: 4))
                if let uuid { w.field("uuid", uuidText(uuid)) }
                w.field("value", hexString(value))
                w.endObject()
                print(w.text)
            } else {
                print(describeValue(value))
            }
        }
    }
}

/// `bluewire gatt write ADDR HANDLE HEX [--without-response]`.
struct GATTWriteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write",
        abstract: "Write a characteristic value or descriptor.",
        discussion: """
            With a response: a Write Request, or prepared writes (Write Long Characteristic Values) \
            when the value does not fit one PDU (ATT_MTU − 3 bytes). --without-response sends a Write \
            Command, which the peripheral never acknowledges and which must fit one PDU.
            """
    )

    @OptionGroup var peripheral: GATTPeerOptions

    @Argument(help: ArgumentHelp("The value or descriptor handle: 0x0003 or 3.", valueName: "handle"))
    var handle: AttributeHandle

    @Argument(help: ArgumentHelp("The value in hex: 0102ff, 01:02:ff or 0x0102ff.", valueName: "hex"))
    var value: String

    @Flag(name: .customLong("without-response"), help: "Send a Write Command (no acknowledgement).")
    var withoutResponse = false

    @Flag(help: "Print one JSON object: handle, length, procedure.")
    var json = false

    @OptionGroup(title: "Security (when the peripheral asks for it)") var security: GATTSecurityOptions

    func validate() throws {
        guard let bytes = parseHex(value) else { throw ValidationError("invalid hex value \(value)") }
        guard bytes.count <= 512 else { throw ValidationError("a value holds at most 512 bytes (Core Vol 3 Part F §3.2.9)") }
    }

    func run() async throws {
        let bytes = parseHex(value) ?? []
        await peripheral.withEnginePeripheral(security: security) { gatt, services, _ in
            let target = services.valueHandle(for: handle.value)
            let mtu = await gatt.exchangedMTU
            let procedure: EngineGATTClient.WriteProcedure
            if withoutResponse {
                guard bytes.count <= mtu - 3 else {
                    throw CLIError("a Write Command carries at most \(mtu - 3) bytes at ATT_MTU \(mtu): \(bytes.count) given (leave out --without-response for a long write)")
                }
                procedure = .writeCommand
            } else {
                procedure = bytes.count > mtu - 3 ? .preparedWrites : .writeRequest
            }
            try await gatt.write(bytes, to: target, procedure: procedure)
            let how = procedure.rawValue
            let handleText = "0x" + hex(target, width: 4)
            if json {
                var w = JSONWriter()
                w.beginObject()
                w.field("handle", handleText)
                w.field("length", bytes.count)
                w.field("procedure", how.replacingOccurrences(of: " ", with: "_"))
                w.endObject()
                print(w.text)
            } else {
                print("wrote \(bytes.count) bytes to \(handleText) (\(how))")
            }
        }
    }
}

/// `bluewire gatt subscribe ADDR HANDLE [--count N] [--indicate]`: one line per value.
struct GATTSubscribeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscribe",
        abstract: "Enable notifications (or indications) of a characteristic and print each value.",
        discussion: """
            Prints one line per value received, until --count values arrived, the peripheral \
            disconnects (status 1), or SIGINT/SIGTERM; then unsubscribes and disconnects.
            """
    )

    @OptionGroup var peripheral: GATTPeerOptions

    @Argument(help: ArgumentHelp("The characteristic's value (or declaration) handle: 0x0003 or 3.", valueName: "handle"))
    var handle: AttributeHandle

    @Option(help: ArgumentHelp("Stop after this many values.", valueName: "n"))
    var count: Int?

    @Flag(help: "Enable indications (confirmed) instead of notifications.")
    var indicate = false

    @Flag(help: "Print one JSON object per value.")
    var json = false

    @OptionGroup(title: "Security (when the peripheral asks for it)") var security: GATTSecurityOptions

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        await peripheral.withEnginePeripheral(security: security) { gatt, services, interrupts in
            guard let found = services.characteristic(at: handle.value) else {
                throw CLIError("no characteristic at \(handle)")
            }
            let needed: CharacteristicProperties = indicate ? .indicate : .notify
            guard found.characteristic.properties.contains(needed) else {
                // The handle as the user typed it (value or declaration), the property by its name.
                throw CLIError("characteristic 0x\(hex(handle.value, width: 4)) does not support \(indicate ? "Indicate" : "Notify")")
            }
            // Listening before the CCCD is written: no value sent right after it is missed.
            let values = await gatt.values(of: found.characteristic.valueHandle)
            try await gatt.configure(found, indications: indicate, enable: true)
            let mtu = await gatt.exchangedMTU
            let count = self.count
            let receiving = Task { () throws(GATTFailure) -> Int in
                var received = 0
                var warned = false
                for await value in values {
                    guard case .value(let bytes, let isIndication) = value else {
                        if case .disconnected(let reason) = value { throw GATTFailure("disconnected: \(reason)") }
                        break
                    }
                    received += 1
                    // A notification or indication carries at most ATT_MTU − 3 octets of the value
                    // (Core Vol 3 Part F §3.4.7.1, §3.4.7.2): a full one may have been cut. Said
                    // once, on stderr.
                    if !warned && bytes.count >= mtu - 3 {
                        warned = true
                        FileHandle.standardError.write(Data("bluewire: note: a value fills ATT_MTU − 3 = \(mtu - 3) bytes and may be longer (gatt read gives it whole)\n".utf8))
                    }
                    // Unbuffered: each value is seen as it arrives, also through a pipe.
                    let text = line(handle: found.characteristic.valueHandle, bytes, isIndication: isIndication, number: received)
                    FileHandle.standardOutput.write(Data((text + "\n").utf8))
                    if let count, received >= count { break }
                }
                return received
            }
            // Interrupted: stop receiving, then unsubscribe and disconnect as after --count.
            interrupts.replace { receiving.cancel() }
            _ = try await receiving.value
            try await gatt.configure(found, indications: indicate, enable: false)
        }
    }

    private func line(handle: UInt16, _ value: [UInt8], isIndication: Bool, number: Int) -> String {
        let kind = isIndication ? "indication" : "notification"
        guard json else { return "0x\(hex(handle, width: 4)) \(kind) \(describeValue(value))" }
        var w = JSONWriter()
        w.beginObject()
        w.field("handle", "0x" + hex(handle, width: 4))
        w.field("kind", kind)
        w.field("number", number)
        w.field("value", hexString(value))
        w.endObject()
        return w.text
    }
}
