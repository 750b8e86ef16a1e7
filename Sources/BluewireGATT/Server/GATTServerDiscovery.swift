import BluewireATT
import BluewireCore

extension GATTServer {
    /// Exchange MTU (Core Vol 3 Part F §3.4.2): answer with the server's receive MTU; ATT_MTU becomes
    /// the smaller of the two, never below 23. The client may send this once per connection (§3.4.2.1);
    /// a repeat is answered but does not change the MTU already in force, which queued PDUs rely on.
    mutating func exchangeMTU(_ clientMTU: UInt16, _ connection: UInt16) -> ATTPDU {
        let serverMTU = configuration.serverMTU
        if connections[connection]?.mtuExchanged == false {
            let mtu = max(GATTServer.defaultMTU, min(Int(clientMTU), serverMTU))
            connections[connection]?.mtu = mtu
            connections[connection]?.mtuExchanged = true
            emit(.mtuExchanged(connection: connection, mtu: mtu))
        }
        return ATTPDU.exchangeMTUResponse(serverRxMTU: UInt16(truncatingIfNeeded: serverMTU))
    }

    /// Find Information (§3.4.3.1): handles and types in the range, all of one UUID size, as many as
    /// fit in ATT_MTU.
    func findInformation(_ start: UInt16, _ end: UInt16, _ connection: UInt16) -> ATTPDU {
        if let invalid = invalidRange(.findInformationRequest, start, end) { return invalid }
        let mtu = self.mtu(for: connection)
        var response = FindInformationResponse()
        var i = database.firstIndex(atOrAfter: start)
        while i < database.attributes.count, database.attributes[i].handle <= end {
            if !response.append(handle: database.attributes[i].handle, type: database.attributes[i].type, mtu: mtu) { break }
            i += 1
        }
        guard !response.isEmpty else { return errorResponse(.findInformationRequest, start, .attributeNotFound) }
        return ATTPDU.findInformationResponse(response)
    }

    /// Find By Type Value (§3.4.3.3): attributes of a 16-bit type whose value equals the one given,
    /// with the end of their group; GATT uses it to discover a primary service by UUID (Part G §4.4.2).
    /// Values the client may not read are never compared, so the search cannot leak them.
    func findByTypeValue(
        _ start: UInt16, _ end: UInt16, _ type: UInt16, _ value: ArraySlice<UInt8>, _ connection: UInt16
    ) -> ATTPDU {
        if let invalid = invalidRange(.findByTypeValueRequest, start, end) { return invalid }
        let mtu = self.mtu(for: connection)
        let wanted = BluetoothUUID(type)
        var response = FindByTypeValueResponse()
        var i = database.firstIndex(atOrAfter: start)
        while i < database.attributes.count, database.attributes[i].handle <= end {
            defer { i += 1 }
            let attribute = database.attributes[i]
            guard attribute.type == wanted, case .value(let bytes) = readAttribute(at: i, offset: 0, connection: connection),
                  bytes.elementsEqual(value) else { continue }
            let groupEnd = attribute.isServiceDeclaration ? database.groupEndHandle(ofServiceAt: i) : attribute.handle
            if !response.append(foundAttributeHandle: attribute.handle, groupEndHandle: groupEnd, mtu: mtu) { break }
        }
        guard !response.isEmpty else { return errorResponse(.findByTypeValueRequest, start, .attributeNotFound) }
        return ATTPDU.findByTypeValueResponse(response)
    }

    /// Read By Type (§3.4.4.1): handle–value pairs of attributes of one type, all of the first one's
    /// length, as many as fit. Used for characteristic discovery (type 0x2803), include discovery and
    /// "Read Using Characteristic UUID" (Part G §4.8.2). An attribute that cannot be read ends the
    /// list; if it is the first one, its error is the answer, with its handle.
    mutating func readByType(_ start: UInt16, _ end: UInt16, _ type: BluetoothUUID, _ connection: UInt16) -> ATTPDU {
        if let invalid = invalidRange(.readByTypeRequest, start, end) { return invalid }
        let mtu = self.mtu(for: connection)
        var response = ReadByTypeResponse()
        var i = database.firstIndex(atOrAfter: start)
        while i < database.attributes.count, database.attributes[i].handle <= end {
            defer { i += 1 }
            let attribute = database.attributes[i]
            guard attribute.type == type else { continue }
            switch readAttribute(at: i, offset: 0, connection: connection) {
            case .error(let error):
                if response.isEmpty { return errorResponse(.readByTypeRequest, attribute.handle, error) }
                return ATTPDU.readByTypeResponse(response)
            case .value(let bytes):
                if !response.append(handle: attribute.handle, value: bytes, mtu: mtu) {
                    return ATTPDU.readByTypeResponse(response)
                }
            }
        }
        guard !response.isEmpty else { return errorResponse(.readByTypeRequest, start, .attributeNotFound) }
        return ATTPDU.readByTypeResponse(response)
    }

    /// Read By Group Type (§3.4.4.9): only the GATT grouping types, primary and secondary service
    /// (Part G §2.5.3), are supported; any other type is Unsupported Group Type. Each entry carries the
    /// service's handle range and UUID.
    func readByGroupType(_ start: UInt16, _ end: UInt16, _ type: BluetoothUUID, _ connection: UInt16) -> ATTPDU {
        if let invalid = invalidRange(.readByGroupTypeRequest, start, end) { return invalid }
        guard type == .primaryService || type == .secondaryService else {
            return errorResponse(.readByGroupTypeRequest, start, .unsupportedGroupType)
        }
        let mtu = self.mtu(for: connection)
        var response = ReadByGroupTypeResponse()
        var i = database.firstIndex(atOrAfter: start)
        while i < database.attributes.count, database.attributes[i].handle <= end {
            defer { i += 1 }
            let attribute = database.attributes[i]
            guard attribute.type == type else { continue }
            switch readAttribute(at: i, offset: 0, connection: connection) {
            case .error(let error):
                if response.isEmpty { return errorResponse(.readByGroupTypeRequest, attribute.handle, error) }
                return ATTPDU.readByGroupTypeResponse(response)
            case .value(let bytes):
                let groupEnd = database.groupEndHandle(ofServiceAt: i)
                if !response.append(handle: attribute.handle, endGroupHandle: groupEnd, value: bytes, mtu: mtu) {
                    return ATTPDU.readByGroupTypeResponse(response)
                }
            }
        }
        guard !response.isEmpty else { return errorResponse(.readByGroupTypeRequest, start, .attributeNotFound) }
        return ATTPDU.readByGroupTypeResponse(response)
    }
}
