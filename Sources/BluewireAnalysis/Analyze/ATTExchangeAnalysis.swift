import BluewireATT
import BluewireCore
import BluewireGATT

extension AnalyzedConnection {
    /// Follows one ATT PDU (the payload of an L2CAP PDU on channel 0x0004) sent in `direction`.
    ///
    /// Requests, commands and confirmations travel from client to server; responses, notifications and
    /// indications from server to client (Core Vol 3 Part F §3.3). That, with the direction, says whose
    /// server the PDU concerns, so the local device acting as client and as server never mixes handles.
    mutating func analyzeATT(_ bytes: ArraySlice<UInt8>, direction: PacketDirection) {
        guard let first = bytes.first else {
            attDecodeErrors += 1
            return
        }
        attOpcodeCounts[first, default: 0] += 1
        let pdu: ATTPDU
        do {
            pdu = try ATTPDU(decoding: bytes)
        } catch {
            attDecodeErrors += 1
            return
        }
        let fromLocal = direction == .hostToController
        let clientToServer = Self.isClientToServer(pdu.opcode)
        // Client-to-server PDUs concern the receiver's server, server-to-client ones the sender's.
        let side: GATTServerSide = clientToServer == fromLocal ? .peer : .local
        let exchanged = side == .peer ? peerServer.analyze(pdu) : localServer.analyze(pdu)
        switch exchanged {
        case .clientRxMTU(let mtu)?: clientRxMTU = mtu
        case .serverRxMTU(let mtu)?: serverRxMTU = mtu
        case nil: break
        }
    }

    /// Whether a PDU with this opcode is sent by a client (requests, commands, confirmations).
    static func isClientToServer(_ opcode: ATTOpcode) -> Bool {
        switch opcode {
        case .errorResponse, .exchangeMTUResponse, .findInformationResponse, .findByTypeValueResponse,
             .readByTypeResponse, .readResponse, .readBlobResponse, .readMultipleResponse,
             .readByGroupTypeResponse, .readMultipleVariableResponse, .writeResponse, .prepareWriteResponse,
             .executeWriteResponse, .handleValueNotification, .handleValueIndication,
             .multipleHandleValueNotification:
            return false
        default:
            // Unknown opcodes: odd methods are responses in ATT's numbering, but a capture cannot tell;
            // treating them as requests only affects which side counts them.
            return true
        }
    }
}

/// An Rx MTU announced by one side of an Exchange MTU (Core Vol 3 Part F §3.4.2).
enum ExchangedMTU: Sendable, Hashable {
    case clientRxMTU(UInt16)
    case serverRxMTU(UInt16)
}

extension ObservedGATTServer {
    /// Applies one PDU exchanged with this server; returns an MTU the bearer as a whole now uses.
    mutating func analyze(_ pdu: ATTPDU) -> ExchangedMTU? {
        switch pdu {
        // Client to server.
        case .exchangeMTURequest(let mtu):
            expect(.exchangeMTU)
            return .clientRxMTU(mtu)
        case .findInformationRequest:
            expect(.findInformation)
        case .findByTypeValueRequest(_, _, let type, let value):
            expect(.findByTypeValue(attributeType: type, value: Array(value)))
        case .readByTypeRequest(_, _, let type):
            expect(.readByType(type))
        case .readRequest(let handle):
            expect(.read(handle: handle))
        case .readBlobRequest(let handle, let offset):
            expect(.readBlob(handle: handle, offset: offset))
        case .readMultipleRequest(let handles):
            expect(.readMultiple(Array(handles)))
        case .readMultipleVariableRequest(let handles):
            expect(.readMultipleVariable(Array(handles)))
        case .readByGroupTypeRequest(_, _, let type):
            expect(.readByGroupType(type))
        case .writeRequest(let handle, let value):
            update(handle) { $0.recordWrite(value, acknowledged: true) }
            expect(.write(handle: handle))
        case .writeCommand(let handle, let value), .signedWriteCommand(let handle, let value, _):
            update(handle) { $0.recordWrite(value, acknowledged: false) }
        case .prepareWriteRequest(let handle, let offset, let part):
            preparedParts.append(PreparedWritePart(handle: handle, offset: Int(offset), value: Array(part)))
            expect(.prepareWrite)
        case .executeWriteRequest(let flags):
            if flags == .writeAllPreparedValues { commitPreparedWrites() }
            preparedParts.removeAll()
            expect(.executeWrite)
        case .handleValueConfirmation, .unknown:
            break

        // Server to client.
        case .errorResponse(_, let handle, let code):
            // Discovery ends with Attribute Not Found on the range's first handle (Core Vol 3 Part G
            // §4.4–§4.7): that is no failure of the attribute, so only requests about one handle count.
            switch takePending() {
            case .read?, .readBlob?, .write?, .prepareWrite?, .readMultiple?, .readMultipleVariable?:
                if handle != 0 { update(handle) { $0.recordError(code) } }
            case nil:
                if handle != 0 && code != .attributeNotFound { update(handle) { $0.recordError(code) } }
            default:
                break
            }
        case .exchangeMTUResponse(let mtu):
            _ = takePending()
            return .serverRxMTU(mtu)
        case .findInformationResponse(let response):
            _ = takePending()
            for entry in response.entries { table.setType(entry.type, of: entry.handle) }
        case .findByTypeValueResponse(let response):
            guard case .findByTypeValue(let type, let value)? = takePending(),
                  type == 0x2800 || type == 0x2801, let uuid = BluetoothUUID(littleEndian: value[...]) else { return nil }
            for entry in response.entries {
                table.addService(handle: entry.foundAttributeHandle, endHandle: entry.groupEndHandle, uuid: uuid,
                                 isPrimary: type == 0x2800)
            }
        case .readByGroupTypeResponse(let response):
            guard case .readByGroupType(let type)? = takePending(),
                  type == .primaryService || type == .secondaryService else { return nil }
            for entry in response.entries {
                guard let uuid = BluetoothUUID(littleEndian: entry.value) else { continue }
                table.addService(handle: entry.handle, endHandle: entry.endGroupHandle, uuid: uuid,
                                 isPrimary: type == .primaryService)
            }
        case .readByTypeResponse(let response):
            guard case .readByType(let type)? = takePending() else { return nil }
            readByType(response, type: type)
        case .readResponse(let value):
            guard case .read(let handle)? = takePending() else { return nil }
            update(handle) { $0.recordRead(value) }
        case .readBlobResponse(let value):
            guard case .readBlob(let handle, let offset)? = takePending() else { return nil }
            update(handle) { $0.recordReadBlob(value, offset: Int(offset)) }
        case .readMultipleResponse(let values):
            guard case .readMultiple(let handles)? = takePending() else { return nil }
            // Values are concatenated without lengths (§3.4.4.8): only a single one can be attributed.
            for handle in handles {
                update(handle) { $0.recordRead(handles.count == 1 ? values : values[values.startIndex..<values.startIndex]) }
            }
        case .readMultipleVariableResponse(let response):
            guard case .readMultipleVariable(let handles)? = takePending() else { return nil }
            var entries = response.entries
            for handle in handles {
                guard let entry = entries.next() else { break }
                update(handle) { $0.recordRead(entry.value) }
            }
        case .writeResponse, .prepareWriteResponse, .executeWriteResponse:
            _ = takePending()
        case .handleValueNotification(let handle, let value):
            update(handle) { $0.recordNotification(value) }
        case .multipleHandleValueNotification(let list):
            for entry in list.entries { update(entry.handle) { $0.recordNotification(entry.value) } }
        case .handleValueIndication(let handle, let value):
            update(handle) { $0.recordIndication(value) }
        }
        return nil
    }

    /// A Read By Type response: characteristic declarations (§4.6.1), include declarations (§4.5.1),
    /// or the values of a Read Using Characteristic UUID (§4.8.2).
    mutating func readByType(_ response: ReadByTypeResponse, type: BluetoothUUID) {
        for entry in response.entries {
            if type == .characteristic {
                guard let declaration = CharacteristicDeclaration(value: entry.value) else { continue }
                table.addCharacteristic(DiscoveredGATTTable.Characteristic(
                    declarationHandle: entry.handle, properties: declaration.properties,
                    valueHandle: declaration.valueHandle, uuid: declaration.uuid))
            } else if type == .include {
                let value = entry.value
                guard value.count == 4 || value.count == 6 else { continue }
                let s = value.startIndex
                let uuid = value.count == 6 ? BluetoothUUID(littleEndian: value[(s + 4)...]) : nil
                table.addInclude(DiscoveredGATTTable.Include(
                    handle: entry.handle, includedServiceHandle: UInt16(value[s]) | UInt16(value[s + 1]) << 8,
                    endGroupHandle: UInt16(value[s + 2]) | UInt16(value[s + 3]) << 8, uuid: uuid))
            } else {
                table.setType(type, of: entry.handle)
                update(entry.handle) { $0.recordRead(entry.value) }
            }
        }
    }

    /// Applies the queued parts (§3.4.6.3, flag 0x01): each handle's parts placed at their offsets.
    mutating func commitPreparedWrites() {
        var order: [UInt16] = []
        var values: [UInt16: [UInt8]] = [:]
        for part in preparedParts {
            var value = values[part.handle] ?? []
            if values[part.handle] == nil { order.append(part.handle) }
            if value.count > part.offset {
                value.removeSubrange(part.offset...)
            } else if value.count < part.offset {
                value.append(contentsOf: repeatElement(0, count: part.offset - value.count))
            }
            value.append(contentsOf: part.value)
            values[part.handle] = value
        }
        for handle in order {
            let value = values[handle] ?? []
            update(handle) { $0.recordPreparedWrite(value) }
        }
    }
}
