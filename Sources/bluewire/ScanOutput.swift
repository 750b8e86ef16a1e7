import BluewireAnalysis
import BluewireCore
import BluewireHCI
import Foundation

/// How `bluewire scan` shows what it finds.
enum ScanOutputMode {
    /// One JSON object per line, per discovered or changed device.
    case json
    /// A table redrawn in place (stdout is a terminal).
    case table
    /// One text line per discovered or changed device (stdout is a pipe or file).
    case lines
}

/// Writes discovered devices to standard output in one of the `ScanOutputMode`s.
///
/// Every write is flushed at once: a scan is live output, read by people and by programs that wait
/// for a device to show up.
final class ScanOutput {
    let mode: ScanOutputMode
    /// Devices in the order first seen, with their latest state (table mode).
    private var rows: [BluetoothAddress: DiscoveredDevice] = [:]
    private var order: [BluetoothAddress] = []

    init(mode: ScanOutputMode) {
        self.mode = mode
    }

    func show(_ device: DiscoveredDevice) {
        switch mode {
        case .json:
            write(ScanJSON.line(device) + "\n")
        case .lines:
            write(ScanText.line(device) + "\n")
        case .table:
            if rows[device.address] == nil { order.append(device.address) }
            rows[device.address] = device
            // Cursor home, clear screen, then the whole table: the simplest redraw that never leaves
            // stale cells behind when a name or a list gets shorter.
            write("\u{1B}[H\u{1B}[2J" + ScanText.table(order.compactMap { rows[$0] }))
        }
    }

    /// Says how the scan ended (table mode only: piped output stays pure data).
    func finish(devices: Int) {
        guard mode == .table else { return }
        FileHandle.standardError.write(Data("bluewire: scan finished, \(devices) device(s)\n".utf8))
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// The text forms of a discovered device: a line, and a table of many.
enum ScanText {
    static let columns = ["ADDRESS", "TYPE", "RSSI", "NAME", "SERVICES", "MANUFACTURER DATA"]
    /// RSSI 127 means "not available" in advertising reports (Core Vol 4 Part E §7.7.65.2, §7.7.65.13);
    /// BlueZ's emulated controller always reports it.
    static let rssiNotAvailable: Int8 = 127

    static func fields(_ device: DiscoveredDevice) -> [String] {
        [
            device.address.description + (device.identityAddress.map { " = " + KeyFile.addressText($0) } ?? ""),
            addressTypeName(device.addressType),
            device.rssi == ScanText.rssiNotAvailable ? "-" : String(device.rssi),
            device.name.map { printable($0) } ?? "-",
            device.serviceUUIDs.isEmpty ? "-" : device.serviceUUIDs.map(\.description).joined(separator: ", "),
            device.manufacturerData.isEmpty ? "-" : device.manufacturerData.map(manufacturerText).joined(separator: ", "),
        ]
    }

    /// `C0:11:22:33:44:55/random -50 dBm "Bumble" services=0x180D (Heart Rate) manufacturer=0xFFFF:0102`:
    /// the address as every command takes it (`/random` for a random one), so it can be pasted;
    /// `identity=F9:C3:24:B4:A7:BE/random` after it when a bond resolves the private address. Only an
    /// address type the text form does not carry (a controller-resolved identity) is named after it.
    static func line(_ device: DiscoveredDevice) -> String {
        let f = fields(device)
        var text = device.address.description + " "
        if device.addressType != .public && device.addressType != .random { text += f[1] + " " }
        if let identity = device.identityAddress { text += "identity=\(KeyFile.addressText(identity)) " }
        text += (device.rssi == rssiNotAvailable ? "rssi=-" : "\(f[2]) dBm")
        if let name = device.name { text += " \"\(printable(name))\"" }
        if !device.serviceUUIDs.isEmpty { text += " services=" + f[4] }
        if !device.manufacturerData.isEmpty { text += " manufacturer=" + f[5] }
        return text
    }

    static func table(_ devices: [DiscoveredDevice]) -> String {
        let rows = [columns] + devices.map(fields)
        var widths = columns.map { _ in 0 }
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        var text = ""
        for row in rows {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }
            text += cells.joined(separator: "  ") + "\n"
        }
        return text
    }

    static func addressTypeName(_ type: BluetoothAddress.AddressType) -> String {
        switch type {
        case .public: "public"
        case .random: "random"
        case .publicIdentity: "public-identity"
        case .randomIdentity: "random-identity"
        default: "0x" + hex(type.rawValue, width: 2)
        }
    }

    static func manufacturerText(_ entry: DiscoveredDevice.ManufacturerData) -> String {
        "0x" + hex(entry.companyIdentifier, width: 4).uppercased() + ":" + hexString(entry.data)
    }

    /// Names are peer data: control characters would move the cursor or break the table.
    static func printable(_ name: String) -> String {
        String(String.UnicodeScalarView(name.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "." : $0 }))
    }
}

/// The JSON-lines form of a discovered device (one object, no newline inside).
enum ScanJSON {
    /// The TX Power Level the device advertised (in its advertising data or scan response), if any.
    static func advertisedTxPower(_ device: DiscoveredDevice) -> Int8? {
        AdvertisingData(device.advertisingData).txPowerLevel
            ?? device.scanResponse.flatMap { AdvertisingData($0).txPowerLevel }
    }

    static func line(_ device: DiscoveredDevice) -> String {
        var json = JSONWriter()
        json.beginObject()
        // As every command takes it: `/random` for a random address (`address_type` says more).
        json.field("address", device.address.description)
        json.field("address_type", ScanText.addressTypeName(device.addressType))
        // The bonded peer a resolvable private address belongs to (scan --keys), else null.
        json.key("identity_address")
        if let identity = device.identityAddress { json.string(KeyFile.addressText(identity)) } else { json.null() }
        json.key("identity_address_type")
        if let identity = device.identityAddress { json.string(ScanText.addressTypeName(identity.type)) } else { json.null() }
        json.key("rssi")
        if device.rssi == ScanText.rssiNotAvailable { json.null() } else { json.integer(device.rssi) }
        json.key("name")
        if let name = device.name { json.string(name) } else { json.null() }
        json.key("connectable")
        json.bool(device.connectable)
        json.key("services")
        json.beginArray()
        for uuid in device.serviceUUIDs {
            json.beginObject()
            json.field("uuid", uuid.shortString)
            if let name = uuid.name { json.field("name", name) }
            json.endObject()
        }
        json.endArray()
        json.key("manufacturer_data")
        json.beginArray()
        for entry in device.manufacturerData {
            json.beginObject()
            json.field("company", "0x" + hex(entry.companyIdentifier, width: 4).uppercased())
            json.field("data", hexString(entry.data))
            json.endObject()
        }
        json.endArray()
        json.key("service_data")
        json.beginArray()
        for entry in device.serviceData {
            json.beginObject()
            json.field("uuid", entry.uuid.shortString)
            json.field("data", hexString(entry.data))
            json.endObject()
        }
        json.endArray()
        // The TX Power Level AD type only (Core Supplement Part A §1.5): an extended report's
        // TX_Power is the controller's figure, which bumble reports as 0 for every advertiser.
        json.key("tx_power")
        if let txPower = ScanJSON.advertisedTxPower(device) { json.integer(txPower) } else { json.null() }
        if let appearance = device.appearance {
            json.field("appearance", "0x" + hex(appearance, width: 4).uppercased())
        }
        json.field("advertising_data", hexString(device.advertisingData))
        json.key("scan_response")
        if let response = device.scanResponse { json.string(hexString(response)) } else { json.null() }
        json.endObject()
        return json.text
    }
}
