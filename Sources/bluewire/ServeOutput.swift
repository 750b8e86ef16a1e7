import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import Foundation

/// Formats `serve`'s events, one line each, as text or JSON lines, and writes them unbuffered (a
/// pipe reader sees each event as it happens).
struct ServeOutput: Sendable {
    let json: Bool

    /// What is on the air: the name as the advertising data carries it (what every scanner sees
    /// first), then exactly what the advertising data and the scan response hold.
    func advertising(name advertisement: Advertisement, address: BluetoothAddress?, plan: AdvertisingPlan, attributes: Int) {
        let kind: String
        switch plan.kind {
        case .legacy: kind = "legacy"
        case .extended(let legacyPDUs): kind = legacyPDUs ? "extended commands, legacy PDUs" : "extended"
        }
        advertising(data: advertisement.data, scanResponse: advertisement.scanResponse, address: address, kind: kind,
                    advertisingData: plan.advertisingData, scanResponseData: plan.scanResponseData, attributes: attributes)
    }

    /// The same, for what the host engine put on the air (`EngineHost.advertisingLayout`).
    func advertising(name advertisement: HostAdvertisement, address: BluetoothAddress?, layout: HostAdvertisingLayout, attributes: Int) {
        let kind: String
        switch layout.kind {
        case .legacy: kind = "legacy"
        case .extended(let legacyPDUs): kind = legacyPDUs ? "extended commands, legacy PDUs" : "extended"
        }
        advertising(data: advertisement.data, scanResponse: advertisement.scanResponse, address: address, kind: kind,
                    advertisingData: layout.advertisingData, scanResponseData: layout.scanResponseData, attributes: attributes)
    }

    private func advertising(
        data elements: [ADElement], scanResponse responseElements: [ADElement], address: BluetoothAddress?, kind: String,
        advertisingData: [UInt8], scanResponseData: [UInt8], attributes: Int
    ) {
        var name: String?
        var shortened = false
        for element in elements {
            if case .completeLocalName(let text) = element { name = text }
            if case .shortenedLocalName(let text) = element, name == nil { name = text; shortened = true }
        }
        let where_ = address.map { "\($0)" } ?? "?"
        let data = elements.map(ServeAdvertisingText.describe)
        let response = responseElements.map(ServeAdvertisingText.describe)
        let nameText = name.map { "\"\($0)\"" + (shortened ? " (shortened)" : "") } ?? "(no name)"
        if json {
            var object: [String: any Sendable] = [
                "event": "advertising", "address": where_, "kind": kind, "attributes": attributes,
                "advertising_data": data, "scan_response": response,
                "advertising_data_hex": hexString(advertisingData), "scan_response_hex": hexString(scanResponseData),
            ]
            if let name { object["name"] = name }
            object["name_shortened"] = shortened
            emit(text: "", json: object)
        } else {
            emit(text: "advertising \(nameText) as \(where_) (\(kind)), serving \(counted(attributes, "attribute"))", json: [:])
            emit(text: "  advertising data: " + (data.isEmpty ? "(empty)" : data.joined(separator: "; ")), json: [:])
            emit(text: "  scan response: " + (response.isEmpty ? "(empty)" : response.joined(separator: "; ")), json: [:])
        }
    }

    func print(_ event: PeripheralEvent) {
        switch event {
        case .connected(let connection):
            emit(text: "connected \(h(connection.handle)) \(connection.peer)",
                 json: ["event": "connected", "connection": Int(connection.handle), "peer": "\(connection.peer)"])
        case .disconnected(let connection, let peer, let reason):
            emit(text: "disconnected \(h(connection)) \(peer): \(reason)",
                 json: ["event": "disconnected", "connection": Int(connection), "peer": "\(peer)", "reason": "\(reason)"])
        case .mtuChanged(let connection, let mtu):
            emit(text: "mtu \(h(connection)) \(mtu)", json: ["event": "mtu", "connection": Int(connection), "mtu": mtu])
        case .read(let read):
            var text = "read \(h(read.connection)) \(h(read.handle)) offset \(read.offset)"
            var object: [String: any Sendable] = ["event": "read", "connection": Int(read.connection), "handle": Int(read.handle), "offset": read.offset]
            if let value = read.value {
                text += ": " + Self.valueText(value)
                object["value"] = hexString(value)
            }
            emit(text: text, json: object)
        case .write(let write):
            emit(text: "write \(h(write.connection)) \(h(write.handle)) offset \(write.offset): " + Self.valueText(write.value),
                 json: ["event": "write", "connection": Int(write.connection), "handle": Int(write.handle),
                        "offset": write.offset, "value": hexString(write.value)])
        case .subscriptionChanged(let subscription):
            var kinds: [String] = []
            if subscription.notifications { kinds.append("notifications") }
            if subscription.indications { kinds.append("indications") }
            let text = kinds.isEmpty
                ? "unsubscribed \(h(subscription.connection)) \(h(subscription.valueHandle))"
                : "subscribed \(h(subscription.connection)) \(h(subscription.valueHandle)) \(kinds.joined(separator: "+"))"
            emit(text: text, json: ["event": kinds.isEmpty ? "unsubscribed" : "subscribed", "connection": Int(subscription.connection),
                                    "handle": Int(subscription.valueHandle), "notifications": subscription.notifications,
                                    "indications": subscription.indications])
        case .indicationConfirmed(let connection, let handle):
            emit(text: "indication confirmed \(h(connection)) \(h(handle))",
                 json: ["event": "indication-confirmed", "connection": Int(connection), "handle": Int(handle)])
        case .indicationDropped(let connection, let handle):
            emit(text: "indication dropped \(h(connection)) \(h(handle)) (queue full)",
                 json: ["event": "indication-dropped", "connection": Int(connection), "handle": Int(handle)])
        case .requestRefused(let connection, let request, let handle, let error):
            emit(text: "refused \(h(connection)) \(request) \(h(handle)): \(error)",
                 json: ["event": "refused", "connection": Int(connection), "request": "\(request)", "handle": Int(handle), "error": "\(error)"])
        case .advertisingStarted:
            emit(text: "advertising on", json: ["event": "advertising-on"])
        case .advertisingStopped:
            emit(text: "advertising off", json: ["event": "advertising-off"])
        }
    }

    func note(_ message: String) {
        emit(text: message, json: ["event": "note", "message": message])
    }

    func stopped(signal: Int32) {
        let name = signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "signal \(signal)"
        emit(text: "stopped (\(name))", json: ["event": "stopped", "signal": name])
    }

    func h(_ value: UInt16) -> String { "0x" + hex(value, width: 4) }

    /// `73206d6f7265 "s more" (6 bytes)`: hex, the text when valid UTF-8, the length; `(empty)`.
    static func valueText(_ value: [UInt8]) -> String {
        value.isEmpty ? "(empty)" : describeValue(value) + " (\(value.count) byte\(value.count == 1 ? "" : "s"))"
    }

    func emit(text: String, json object: [String: any Sendable]) {
        var line = text
        if json { line = JSONLine.make(object) }
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

/// AD structures as `serve` prints them (Core Supplement Part A §1).
enum ServeAdvertisingText {
    static func describe(_ element: ADElement) -> String {
        switch element {
        case .flags(let flags): "flags 0x" + hex(flags.rawValue, width: 2)
        case .serviceUUIDs(let uuids, let complete):
            (complete ? "complete" : "incomplete") + " service list " + uuids.map(\.shortString).joined(separator: ",")
        case .completeLocalName(let name): "complete local name \"\(name)\""
        case .shortenedLocalName(let name): "shortened local name \"\(name)\""
        case .txPowerLevel(let level): "tx power \(level) dBm"
        case .appearance(let value): "appearance 0x" + hex(value, width: 4)
        case .manufacturerSpecificData(let company, let data): "manufacturer 0x" + hex(company, width: 4) + " " + hexString(data)
        case .serviceData(let uuid, let data): "service data \(uuid.shortString) " + hexString(data)
        case .peripheralConnectionIntervalRange(let min, let max): "connection interval 0x\(hex(min, width: 4))-0x\(hex(max, width: 4))"
        case .uri(let bytes): "uri " + hexString(bytes)
        case .leRole(let role): "le role 0x" + hex(role, width: 2)
        case .raw(let type, let data): "type 0x\(hex(type.rawValue, width: 2)) " + hexString(data)
        }
    }
}
