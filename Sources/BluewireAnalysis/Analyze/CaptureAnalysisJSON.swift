import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI

extension CaptureAnalysis {
    /// The analysis as one JSON object (`bluewire analyze --json`): connections with their link
    /// changes, traffic per direction, GATT servers as trees with per-attribute activity, and devices.
    /// Handles are `"0x0001"` strings, UUIDs as in database files, values lower-case hex.
    public var json: String {
        var w = JSONWriter()
        w.beginObject()
        w.field("records", recordCount)
        w.field("packets", packetCount)
        w.field("decode_errors", decodeErrors)
        w.field("failed_connection_attempts", failedConnectionAttempts)
        w.key("att_opcodes")
        Self.writeOpcodes(attOpcodeCounts, to: &w)
        w.key("connections")
        w.beginArray()
        for connection in connections { connection.writeJSON(to: &w) }
        w.endArray()
        w.key("devices")
        w.beginArray()
        for device in devices {
            w.beginObject()
            w.key("address")
            if let address = device.address { w.string(address.description) } else { w.null() }
            w.key("connections")
            w.beginArray()
            for index in device.connectionIndices { w.integer(index) }
            w.endArray()
            w.field("discovered_attributes", device.table.attributeTypes.count)
            w.field("database_file", device.databaseFileName)
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return w.text
    }

    static func writeOpcodes(_ counts: [UInt8: Int], to w: inout JSONWriter) {
        w.beginObject()
        for opcode in counts.keys.sorted() { w.field("0x" + hex(opcode, width: 2), counts[opcode] ?? 0) }
        w.endObject()
    }

    static func handleText(_ handle: UInt16) -> String { "0x" + hex(handle, width: 4) }

    static func uuidText(_ uuid: BluetoothUUID) -> String {
        if let short = uuid.uint16 { return "0x" + hex(short, width: 4) }
        return uuid.uuidString
    }
}

extension AnalyzedConnection {
    func writeJSON(to w: inout JSONWriter) {
        w.beginObject()
        w.field("index", index)
        w.field("handle", CaptureAnalysis.handleText(handle))
        w.field("transport", transport.name)
        w.key("peer")
        if let peerAddress { w.string(peerAddress.description) } else { w.null() }
        w.key("local_role")
        if let localRole { w.string(localRole.name) } else { w.null() }
        w.field("opened_at_record", openedAtRecord)
        w.key("closed_at_record")
        if let closedAtRecord { w.integer(closedAtRecord) } else { w.null() }
        w.key("disconnect_reason")
        if let disconnectReason { w.string("0x" + hex(disconnectReason.rawValue, width: 2)) } else { w.null() }
        w.key("parameters")
        w.beginArray()
        for p in parameterHistory {
            w.beginObject()
            w.field("record", p.recordIndex)
            w.field("interval_us", p.intervalMicroseconds)
            w.field("peripheral_latency", p.peripheralLatency)
            w.field("supervision_timeout_ms", p.supervisionTimeoutMilliseconds)
            w.endObject()
        }
        w.endArray()
        w.key("data_length_changes")
        w.beginArray()
        for change in dataLengthChanges {
            w.beginObject()
            w.field("record", change.recordIndex)
            w.field("max_tx_octets", change.maxTxOctets)
            w.field("max_tx_time_us", change.maxTxTime)
            w.field("max_rx_octets", change.maxRxOctets)
            w.field("max_rx_time_us", change.maxRxTime)
            w.endObject()
        }
        w.endArray()
        w.key("phy_updates")
        w.beginArray()
        for update in phyUpdates {
            w.beginObject()
            w.field("record", update.recordIndex)
            w.field("status", "0x" + hex(update.status.rawValue, width: 2))
            w.field("tx_phy", PHYUpdate.name(ofPHY: update.txPHY))
            w.field("rx_phy", PHYUpdate.name(ofPHY: update.rxPHY))
            w.endObject()
        }
        w.endArray()
        w.key("encrypted")
        w.bool(encrypted)
        w.key("security_level")
        if let securityLevel { w.integer(securityLevel) } else { w.null() }
        w.key("security_level_name")
        if let securityLevel {
            w.string(ObservedPairing.levelName(securityLevel))
        } else {
            w.string("encrypted with a key from an earlier pairing")
        }
        w.field("security_requests", securityRequests)
        w.key("pairings")
        w.beginArray()
        for pairing in pairings { pairing.writeJSON(to: &w) }
        w.endArray()
        w.key("att_mtu")
        if let mtu = leATTMTU { w.integer(mtu) } else { w.null() }
        w.field("duration_us", durationMicroseconds)
        w.key("sent")
        sent.writeJSON(to: &w, bitsPerSecond: sentATTBitsPerSecond)
        w.key("received")
        received.writeJSON(to: &w, bitsPerSecond: receivedATTBitsPerSecond)
        w.key("att_opcodes")
        CaptureAnalysis.writeOpcodes(attOpcodeCounts, to: &w)
        w.key("errors")
        w.beginObject()
        w.field("acl", aclDecodeErrors)
        w.field("reassembly", reassemblyErrors)
        w.field("att", attDecodeErrors)
        w.field("smp", smpDecodeErrors)
        w.endObject()
        w.key("channels")
        w.beginArray()
        for channel in channels { channel.writeJSON(to: &w) }
        w.endArray()
        w.key("servers")
        w.beginArray()
        for server in [peerServer, localServer] where !server.table.isEmpty || !server.activity.isEmpty {
            server.writeJSON(to: &w)
        }
        w.endArray()
        w.endObject()
    }
}

extension DirectionTraffic {
    func writeJSON(to w: inout JSONWriter, bitsPerSecond: Int64?) {
        w.beginObject()
        w.field("acl_packets", aclPackets)
        w.field("acl_bytes", aclBytes)
        w.field("l2cap_pdus", l2capPDUs)
        w.field("att_pdus", attPDUs)
        w.field("att_bytes", attBytes)
        w.field("smp_pdus", smpPDUs)
        w.field("signaling_pdus", signalingPDUs)
        w.key("att_bits_per_second")
        if let bitsPerSecond { w.integer(bitsPerSecond) } else { w.null() }
        w.endObject()
    }
}

extension ObservedGATTServer {
    func writeJSON(to w: inout JSONWriter) {
        let tree = DiscoveredGATTTree(table)
        w.beginObject()
        w.field("side", side.name)
        w.key("services")
        w.beginArray()
        for service in tree.services {
            w.beginObject()
            w.field("handle", CaptureAnalysis.handleText(service.declaration.handle))
            w.field("end_handle", CaptureAnalysis.handleText(service.declaration.endHandle))
            Self.writeUUID(service.declaration.uuid, to: &w)
            w.key("primary")
            w.bool(service.declaration.isPrimary)
            w.key("includes")
            w.beginArray()
            for include in service.includes {
                w.beginObject()
                w.field("handle", CaptureAnalysis.handleText(include.handle))
                w.field("service_handle", CaptureAnalysis.handleText(include.includedServiceHandle))
                w.field("end_group_handle", CaptureAnalysis.handleText(include.endGroupHandle))
                w.endObject()
            }
            w.endArray()
            w.key("characteristics")
            writeCharacteristics(service.characteristics, to: &w)
            w.endObject()
        }
        w.endArray()
        w.key("orphan_characteristics")
        writeCharacteristics(tree.orphanCharacteristics, to: &w)
        w.key("other_attributes")
        w.beginArray()
        let (otherHandles, otherTypes) = otherAttributes(tree)
        for handle in otherHandles {
            w.beginObject()
            w.field("handle", CaptureAnalysis.handleText(handle))
            if let type = otherTypes[handle] { Self.writeUUID(type, to: &w) }
            w.key("activity")
            self.activity(of: handle).writeJSON(to: &w)
            w.endObject()
        }
        w.endArray()
        w.field("answered_requests", answeredRequests)
        w.field("unanswered_requests", unansweredRequests)
        w.endObject()
    }

    /// Handles outside the tree's characteristics: attributes of known type that no declaration
    /// covers, and handles with activity that discovery never reached (capture started later).
    func otherAttributes(_ tree: DiscoveredGATTTree) -> (handles: [UInt16], types: [UInt16: BluetoothUUID]) {
        let shown = tree.characteristicHandles
        var types: [UInt16: BluetoothUUID] = [:]
        var handles = Set<UInt16>()
        for attribute in tree.orphanAttributes {
            types[attribute.handle] = attribute.uuid
            handles.insert(attribute.handle)
        }
        for handle in activity.keys where !shown.contains(handle) { handles.insert(handle) }
        return (handles.sorted(), types)
    }

    func writeCharacteristics(_ list: [DiscoveredGATTTree.Characteristic], to w: inout JSONWriter) {
        w.beginArray()
        for characteristic in list {
            let declaration = characteristic.declaration
            w.beginObject()
            w.field("handle", CaptureAnalysis.handleText(declaration.declarationHandle))
            w.field("value_handle", CaptureAnalysis.handleText(declaration.valueHandle))
            Self.writeUUID(declaration.uuid, to: &w)
            w.key("properties")
            w.beginArray()
            for name in declaration.properties.fileNames { w.string(name) }
            w.endArray()
            w.key("activity")
            activity(of: declaration.valueHandle).writeJSON(to: &w)
            w.key("descriptors")
            w.beginArray()
            for descriptor in characteristic.descriptors {
                w.beginObject()
                w.field("handle", CaptureAnalysis.handleText(descriptor.handle))
                Self.writeUUID(descriptor.uuid, to: &w)
                w.key("activity")
                activity(of: descriptor.handle).writeJSON(to: &w)
                w.endObject()
            }
            w.endArray()
            w.endObject()
        }
        w.endArray()
    }

    static func writeUUID(_ uuid: BluetoothUUID, to w: inout JSONWriter) {
        w.field("uuid", CaptureAnalysis.uuidText(uuid))
        w.key("name")
        if let name = uuid.name { w.string(name) } else { w.null() }
    }
}

extension AttributeActivity {
    func writeJSON(to w: inout JSONWriter) {
        func value(_ key: String, _ bytes: [UInt8]?) {
            w.key(key)
            if let bytes { w.string(hexString(bytes)) } else { w.null() }
        }
        w.beginObject()
        w.field("reads", reads)
        value("last_read", lastReadValue)
        w.field("write_requests", writeRequests)
        w.field("write_commands", writeCommands)
        w.field("prepared_writes", preparedWrites)
        value("last_written", lastWrittenValue)
        w.field("notifications", notifications)
        value("last_notified", lastNotifiedValue)
        w.field("indications", indications)
        value("last_indicated", lastIndicatedValue)
        w.field("bytes_read", readBytes)
        w.field("bytes_written", writtenBytes)
        w.field("bytes_notified", notifiedBytes)
        w.field("bytes_indicated", indicatedBytes)
        w.field("errors", errors)
        w.key("last_error")
        if let lastError { w.string(lastError.name) } else { w.null() }
        w.endObject()
    }
}

extension ObservedPairing {
    func writeJSON(to w: inout JSONWriter) {
        func optionalBool(_ name: String, _ value: Bool?) {
            w.key(name)
            if let value { w.bool(value) } else { w.null() }
        }
        func names(_ list: [String]) {
            w.beginArray()
            for name in list { w.string(name) }
            w.endArray()
        }
        w.beginObject()
        w.field("record", startedAtRecord)
        w.field("initiator", localIsInitiator ? "local" : "peer")
        optionalBool("secure_connections", secureConnections)
        w.key("method")
        if let methodKey { w.string(methodKey) } else { w.null() }
        w.key("passkey_entry")
        if let passkeyRoles { w.string(passkeyRoles) } else { w.null() }
        w.field("method_name", methodText)
        w.key("key_size")
        if let keySize { w.integer(Int(keySize)) } else { w.null() }
        optionalBool("bonding", bonding)
        w.key("keys_distributed")
        w.beginObject()
        w.key("local")
        names(keysFromLocal)
        w.key("peer")
        names(keysFromPeer)
        w.endObject()
        w.key("failed")
        if let failure { w.string(failure.name) } else { w.null() }
        w.key("failed_by")
        if let failureFromLocal { w.string(failureFromLocal ? "local" : "peer") } else { w.null() }
        w.key("encrypted_at_record")
        if let encryptedAtRecord { w.integer(encryptedAtRecord) } else { w.null() }
        w.key("security_level")
        if let securityLevel { w.integer(securityLevel) } else { w.null() }
        w.endObject()
    }
}
