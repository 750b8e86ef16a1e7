import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI

extension CaptureAnalysis {
    /// A readable report (`bluewire analyze`): per connection its peer, roles, parameters, MTU, link
    /// changes and traffic, then each GATT server as a table of attributes with SIG names and, per
    /// characteristic value and descriptor, reads (R), writes (W), notifications (N), indications (I)
    /// and errors (E) with the last value seen.
    public var text: String {
        var out = "Capture: \(recordCount) records, \(packetCount) HCI packets; \(connections.count) connection(s), "
            + "\(establishedConnections.count) set up in the capture, \(failedConnectionAttempts) failed attempt(s)"
        if decodeErrors > 0 { out += ", \(decodeErrors) undecodable packet(s)" }
        out += "\n"
        for connection in connections { out += "\n" + connection.text }
        let exportable = devices.filter { !$0.table.isEmpty }
        if !exportable.isEmpty {
            out += "\nDevices with a discovered GATT database (--export-db writes one file each):\n"
            for device in exportable {
                out += "  \(device.name): \(device.table.attributeTypes.count) attributes -> \(device.databaseFileName)\n"
            }
        }
        return out
    }

    /// `value` / `scale` with one decimal: 7500 / 1000 → "7.5".
    static func decimal(_ value: Int64, scale: Int64) -> String {
        let tenths = (value * 10 + scale / 2) / scale
        return "\(tenths / 10).\(abs(tenths % 10))"
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    static func padLeft(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }

    /// Hex of at most 16 octets, and the text when the value is valid UTF-8 without control
    /// characters (names and strings: Core Vol 3 Part C §12.1 gives the Device Name as UTF-8).
    static func valueText(_ bytes: [UInt8]) -> String {
        if bytes.isEmpty { return "(empty)" }
        var out = hexString(bytes.prefix(16)) + (bytes.count > 16 ? "… (\(bytes.count) B)" : "")
        if let text = printableUTF8(bytes) {
            var shown = Substring(text)
            var cut = false
            while shown.utf8.count > 32 { shown = shown.dropLast(); cut = true }
            out += " \"" + shown + (cut ? "…" : "") + "\""
        }
        return out
    }

    /// `bytes` as a string when they are valid UTF-8 and hold no C0 or C1 control character (nor
    /// DEL), else nil. Checked on scalar values only: no Unicode property tables.
    public static func printableUTF8(_ bytes: [UInt8]) -> String? {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        for scalar in text.unicodeScalars where scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value < 0xA0) {
            return nil
        }
        return text
    }
}

extension AnalyzedConnection {
    /// The connection's section of the text report.
    public var text: String {
        var out = "Connection \(index): handle 0x" + hex(handle, width: 4) + ", \(transport.name)"
        out += ", peer " + (peerAddress?.description ?? "unknown (set up before the capture)")
        if let localRole { out += ", local \(localRole.name)" }
        out += "\n  records \(openedAtRecord)–" + (closedAtRecord.map { "\($0)" } ?? "end")
        if let disconnectReason { out += ", disconnected: \(disconnectReason)" }
        out += "\n"
        if let parameters {
            out += "  interval " + CaptureAnalysis.decimal(parameters.intervalMicroseconds, scale: 1_000) + " ms, latency \(parameters.peripheralLatency), "
                + "supervision timeout \(parameters.supervisionTimeoutMilliseconds) ms"
            if parameterHistory.count > 1 {
                out += " (intervals: " + parameterHistory.map { CaptureAnalysis.decimal($0.intervalMicroseconds, scale: 1_000) }
                    .joined(separator: " → ") + " ms)"
            }
            out += "\n"
        }
        if let attMTU = leATTMTU {
            out += "  ATT MTU \(attMTU)" + (clientRxMTU == nil ? " (no exchange)" : " (client \(clientRxMTU ?? 0), server \(serverRxMTU.map { "\($0)" } ?? "-"))")
            out += ", encrypted: " + (encrypted ? "yes" : "no") + "\n"
        } else {
            out += "  encrypted: " + (encrypted ? "yes" : "no") + "\n"
        }
        out += securityText
        for change in dataLengthChanges {
            out += "  data length (record \(change.recordIndex)): TX \(change.maxTxOctets) B / \(change.maxTxTime) µs, "
                + "RX \(change.maxRxOctets) B / \(change.maxRxTime) µs\n"
        }
        for update in phyUpdates {
            out += "  PHY update (record \(update.recordIndex)): TX " + PHYUpdate.name(ofPHY: update.txPHY)
                + ", RX " + PHYUpdate.name(ofPHY: update.rxPHY) + (update.status.isSuccess ? "" : " (status \(update.status))") + "\n"
        }
        out += "  duration " + CaptureAnalysis.decimal(durationMicroseconds, scale: 1_000_000) + " s (first to last ACL packet)\n"
        out += "  sent:     " + sent.text(bitsPerSecond: sentATTBitsPerSecond) + "\n"
        out += "  received: " + received.text(bitsPerSecond: receivedATTBitsPerSecond) + "\n"
        let errors = aclDecodeErrors + reassemblyErrors + attDecodeErrors
        if errors > 0 {
            out += "  errors: \(aclDecodeErrors) ACL, \(reassemblyErrors) reassembly, \(attDecodeErrors) ATT\n"
        }
        for channel in channels { out += channel.text }
        for server in [peerServer, localServer] where !server.table.isEmpty || !server.activity.isEmpty {
            out += server.text
        }
        return out
    }
}

extension DirectionTraffic {
    func text(bitsPerSecond: Int64?) -> String {
        var out = "\(aclPackets) ACL packets (\(aclBytes) B), \(attPDUs) ATT PDUs (\(attBytes) B)"
        if let bitsPerSecond {
            out += ", " + (bitsPerSecond < 10_000 ? "\(bitsPerSecond) bit/s" : CaptureAnalysis.decimal(bitsPerSecond, scale: 1_000) + " kbit/s")
                + " ATT"
        }
        if smpPDUs > 0 { out += ", \(smpPDUs) SMP" }
        if signalingPDUs > 0 { out += ", \(signalingPDUs) LE signaling" }
        return out
    }
}

extension ObservedGATTServer {
    /// One row of the server's table before the columns are laid out.
    struct TableRow {
        var handle: UInt16?
        var attribute: String
        var properties: String
        var counters: AttributeActivity?
    }

    /// The server as a table: one row per declaration, characteristic value and descriptor. The
    /// attribute and properties columns are as wide as their longest cell (at least 58 and 24), so a
    /// characteristic with many properties does not push its counters out of line.
    public var text: String {
        var out = "  GATT server of the \(side == .peer ? "peer (local device was client)" : "local device (peer was client)"):\n"
        var rows: [TableRow] = []
        let tree = DiscoveredGATTTree(table)
        for service in tree.services {
            let d = service.declaration
            rows.append(TableRow(handle: d.handle, attribute: (d.isPrimary ? "Primary Service " : "Secondary Service ") + d.uuid.description,
                                 properties: "0x" + hex(d.handle, width: 4) + "–0x" + hex(d.endHandle, width: 4)))
            for include in service.includes {
                rows.append(TableRow(handle: include.handle, attribute: "  Include 0x" + hex(include.includedServiceHandle, width: 4)
                    + "–0x" + hex(include.endGroupHandle, width: 4), properties: ""))
            }
            rows += characteristicRows(service.characteristics)
        }
        if !tree.orphanCharacteristics.isEmpty {
            rows.append(TableRow(attribute: "(characteristics outside any discovered service)", properties: ""))
            rows += characteristicRows(tree.orphanCharacteristics)
        }
        let (handles, types) = otherAttributes(tree)
        if !handles.isEmpty {
            rows.append(TableRow(attribute: "(attributes outside any discovered characteristic)", properties: ""))
            for handle in handles {
                rows.append(TableRow(handle: handle, attribute: types[handle].map { "Attribute " + $0.description } ?? "Attribute of unknown type",
                                     properties: "", counters: self.activity(of: handle)))
            }
        }
        // The widest cell of each column (notes without a handle span the row and do not count).
        var attributeWidth = 57, propertiesWidth = 23
        for row in rows where row.handle != nil {
            attributeWidth = max(attributeWidth, row.attribute.count)
            propertiesWidth = max(propertiesWidth, row.properties.count)
        }
        out += "    " + CaptureAnalysis.pad("handle", 8) + CaptureAnalysis.pad("attribute", attributeWidth + 1)
            + CaptureAnalysis.pad("properties", propertiesWidth + 1) + "     R     W     N     I   E  last value\n"
        for row in rows {
            guard let handle = row.handle else {
                out += "    " + row.attribute + "\n"
                continue
            }
            out += self.row(handle, row.attribute, row.properties, counters: row.counters,
                            attributeWidth: attributeWidth + 1, propertiesWidth: propertiesWidth + 1)
        }
        return out
    }

    func characteristicRows(_ list: [DiscoveredGATTTree.Characteristic]) -> [TableRow] {
        var rows: [TableRow] = []
        for characteristic in list {
            let d = characteristic.declaration
            rows.append(TableRow(handle: d.declarationHandle, attribute: "  Characteristic " + d.uuid.description, properties: ""))
            rows.append(TableRow(handle: d.valueHandle, attribute: "    Value", properties: d.properties.fileNames.joined(separator: ","),
                                 counters: self.activity(of: d.valueHandle)))
            for descriptor in characteristic.descriptors {
                rows.append(TableRow(handle: descriptor.handle, attribute: "    Descriptor " + descriptor.uuid.description,
                                     properties: "", counters: self.activity(of: descriptor.handle)))
            }
        }
        return rows
    }

    func row(
        _ handle: UInt16, _ attribute: String, _ properties: String, counters: AttributeActivity?,
        attributeWidth: Int, propertiesWidth: Int
    ) -> String {
        var out = "    " + CaptureAnalysis.pad("0x" + hex(handle, width: 4), 8) + CaptureAnalysis.pad(attribute, attributeWidth)
            + CaptureAnalysis.pad(properties, propertiesWidth)
        if let a = counters {
            out += CaptureAnalysis.padLeft("\(a.reads)", 6) + CaptureAnalysis.padLeft("\(a.writes)", 6)
                + CaptureAnalysis.padLeft("\(a.notifications)", 6) + CaptureAnalysis.padLeft("\(a.indications)", 6)
                + CaptureAnalysis.padLeft("\(a.errors)", 4)
            if let value = a.lastReadValue {
                out += "  read " + CaptureAnalysis.valueText(value)
            } else if let value = a.lastNotifiedValue ?? a.lastIndicatedValue {
                out += "  notified " + CaptureAnalysis.valueText(value)
            } else if let value = a.lastWrittenValue {
                out += "  written " + CaptureAnalysis.valueText(value)
            } else if let error = a.lastError {
                out += "  error: " + error.name
            }
        }
        while out.last == " " { out.removeLast() }
        return out + "\n"
    }
}

extension AnalyzedConnection {
    /// The pairing lines and the resulting security level (only when the link saw SMP or encryption).
    var securityText: String {
        guard encrypted || !pairings.isEmpty || securityRequests > 0 else { return "" }
        var out = ""
        if securityRequests > 0 { out += "  security requests: \(securityRequests)\n" }
        for pairing in pairings {
            out += "  pairing (record \(pairing.startedAtRecord), \(pairing.localIsInitiator ? "local" : "peer") initiates): "
                + pairing.methodText
            if let keySize = pairing.keySize { out += ", key size \(keySize)" }
            if let bonding = pairing.bonding { out += bonding ? ", bonding" : ", no bonding" }
            out += "\n"
            if !pairing.keysFromLocal.isEmpty || !pairing.keysFromPeer.isEmpty {
                out += "    keys from local: " + (pairing.keysFromLocal.isEmpty ? "none" : pairing.keysFromLocal.joined(separator: " "))
                    + "; from peer: " + (pairing.keysFromPeer.isEmpty ? "none" : pairing.keysFromPeer.joined(separator: " ")) + "\n"
            }
            if let failure = pairing.failure {
                out += "    failed: \(failure.name) (sent by \((pairing.failureFromLocal ?? false) ? "local" : "peer"))\n"
            }
        }
        if let securityLevel {
            out += "  security level \(securityLevel) (\(ObservedPairing.levelName(securityLevel)))\n"
        } else {
            out += "  security: encrypted with a key from an earlier pairing (level not in the capture)\n"
        }
        return out
    }
}
