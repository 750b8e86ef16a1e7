import ArgumentParser
import Bluewire
import BluewireAnalysis
import BluewireCore
import BluewireGATT
import Foundation

/// `bluewire gatt dump ADDR [--json]`: the peripheral's whole database with every readable value.
struct GATTDumpCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Discover every service, characteristic and descriptor and read every readable value.",
        discussion: """
            The table lists each attribute by handle: declarations, characteristic values with their \
            properties, descriptors, with UUIDs and their SIG names. Values longer than 32 bytes are \
            cut in the table; --json prints one object with every value whole, the service tree and \
            the flat attribute table.
            """
    )

    @OptionGroup var peripheral: GATTPeerOptions

    @Flag(help: "Print one JSON object instead of the table.")
    var json = false

    @OptionGroup(title: "Security (when the peripheral asks for it)") var security: GATTSecurityOptions

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        let peer = try peripheral.peer
        await peripheral.withEnginePeripheral(security: security) { gatt, services, _ in
            let dump = try await gatt.dump(services)
            let mtu = await gatt.exchangedMTU
            print(json ? GATTDumpOutput.json(dump, peer: peer, mtu: mtu) : GATTDumpOutput.table(dump, peer: peer, mtu: mtu))
        }
    }
}

/// How `gatt dump` shows a `GATTDump`.
enum GATTDumpOutput {
    /// One line per attribute, in handle order, indented by what it belongs to.
    static func table(_ dump: GATTDump, peer: BluetoothAddress, mtu: Int) -> String {
        var rows: [[String]] = [["HANDLE", "ATTRIBUTE", "UUID", "NAME", "PROPERTIES", "VALUE"]]
        for attribute in dump.attributes {
            var kind: String
            var uuid = attribute.type
            var properties = ""
            var value = attribute.value.map { describeValue($0, limit: 32) } ?? ""
            switch attribute.type {
            case .primaryService, .secondaryService:
                kind = attribute.type == .primaryService ? "Primary Service" : "Secondary Service"
                if let bytes = attribute.value, let service = BluetoothUUID(littleEndian: bytes[...]) {
                    uuid = service
                    let end = dump.services.first { $0.service.handle == attribute.handle }?.service.endHandle ?? attribute.handle
                    value = "0x\(hex(attribute.handle, width: 4))-0x\(hex(end, width: 4))"
                }
            case .include:
                kind = "  Include"
                let include = dump.services.flatMap(\.includes).first { $0.declarationHandle == attribute.handle }
                if let include {
                    uuid = include.uuid
                    value = "0x\(hex(include.serviceHandle, width: 4))-0x\(hex(include.endHandle, width: 4))"
                }
            case .characteristic:
                kind = "  Characteristic"
                if let bytes = attribute.value, bytes.count >= 5, let characteristic = BluetoothUUID(littleEndian: bytes[3...]) {
                    uuid = characteristic
                    properties = CharacteristicProperties(rawValue: bytes[0]).fileNames.joined(separator: ",")
                    value = "value 0x\(hex(UInt16(bytes[1]) | UInt16(bytes[2]) << 8, width: 4))"
                }
            default:
                if let characteristicProperties = attribute.properties {
                    kind = "    Value"
                    properties = characteristicProperties.fileNames.joined(separator: ",")
                } else {
                    kind = "    Descriptor"
                }
                if let error = attribute.readError { value = "(\(readErrorText(error)))" }
            }
            rows.append(["0x\(hex(attribute.handle, width: 4))", kind, uuidText(uuid), uuid.name ?? "", properties, value])
        }
        var widths = [Int](repeating: 0, count: rows[0].count)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        let lines = rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
        let services = dump.services.count
        let characteristics = dump.services.reduce(0) { $0 + $1.characteristics.count }
        return "\(peer): ATT MTU \(mtu), \(counted(services, "service")), \(counted(characteristics, "characteristic")), "
            + "\(counted(dump.attributes.count, "attribute"))\n"
            + lines.joined(separator: "\n")
    }

    /// One JSON object: the peer, the MTU, the service tree with values, and the flat attribute table.
    static func json(_ dump: GATTDump, peer: BluetoothAddress, mtu: Int) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.field("peer", "\(peer)")
        w.field("mtu", mtu)
        w.key("services")
        w.beginArray()
        for entry in dump.services {
            w.beginObject()
            w.field("handle", handleText(entry.service.handle))
            w.field("end_handle", handleText(entry.service.endHandle))
            uuidFields(&w, entry.service.uuid)
            w.key("primary")
            w.bool(entry.service.isPrimary)
            w.key("includes")
            w.beginArray()
            for include in entry.includes {
                w.beginObject()
                w.field("handle", handleText(include.declarationHandle))
                w.field("service_handle", handleText(include.serviceHandle))
                w.field("end_handle", handleText(include.endHandle))
                uuidFields(&w, include.uuid)
                w.endObject()
            }
            w.endArray()
            w.key("characteristics")
            w.beginArray()
            for item in entry.characteristics {
                let c = item.characteristic
                w.beginObject()
                w.field("handle", handleText(c.handle))
                w.field("value_handle", handleText(c.valueHandle))
                uuidFields(&w, c.uuid)
                w.key("properties")
                w.beginArray()
                for name in c.properties.fileNames { w.string(name) }
                w.endArray()
                valueFields(&w, dump, c.valueHandle)
                w.key("descriptors")
                w.beginArray()
                for descriptor in item.descriptors {
                    w.beginObject()
                    w.field("handle", handleText(descriptor.handle))
                    uuidFields(&w, descriptor.uuid)
                    valueFields(&w, dump, descriptor.handle)
                    w.endObject()
                }
                w.endArray()
                w.endObject()
            }
            w.endArray()
            w.endObject()
        }
        w.endArray()
        // The attribute table, in the form of GATT database files (Docs/DatabaseFormat.md), values where known.
        w.key("attributes")
        w.beginArray()
        for attribute in dump.attributes {
            w.beginObject()
            w.field("handle", handleText(attribute.handle))
            w.field("type", uuidText(attribute.type).lowercased())
            if let value = attribute.value { w.field("value", hexString(value)) }
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return w.text
    }

    private static func handleText(_ handle: UInt16) -> String { "0x" + hex(handle, width: 4) }

    private static func uuidFields(_ w: inout JSONWriter, _ uuid: BluetoothUUID) {
        w.field("uuid", uuidText(uuid))
        if let name = uuid.name { w.field("name", name) }
    }

    private static func valueFields(_ w: inout JSONWriter, _ dump: GATTDump, _ handle: UInt16) {
        if let value = dump.values[handle] { w.field("value", hexString(value)) }
        if let error = dump.readErrors[handle] { w.field("error", readErrorText(error)) }
    }

    /// `Read Not Permitted` for an ATT error, the error's description otherwise.
    private static func readErrorText(_ error: GATTError) -> String {
        error.attErrorCode.map(\.name) ?? "\(error)"
    }
}
