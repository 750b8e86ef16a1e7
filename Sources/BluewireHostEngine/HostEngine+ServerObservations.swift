import BluewireATT
import BluewireCore
import BluewireGATT

extension HostEngine {
    /// Reports what the GATT server answered a peer's request: the values it served
    /// (`.serverRead`) and the requests it refused (`.serverRequestRefused`), so that an application
    /// serving a database can show what its centrals do, and why a read was refused (a permission
    /// the link does not meet yet, Core Vol 3 Part F §3.4.1.1).
    mutating func observeServerResponse(to request: ATTPDU, response: ATTPDU, on connection: UInt16) {
        if case .errorResponse(let opcode, let handle, let error) = response {
            // Attribute Not Found is how discovery ends (Core Vol 3 Part G §4.4.1), not a refusal.
            guard error != .attributeNotFound else { return }
            emit(.serverRequestRefused(connection: connection, request: opcode, handle: handle, error: error))
            return
        }
        switch (request, response) {
        case (.readRequest(let handle), .readResponse(let value)):
            emit(.serverRead(connection: connection, handle: handle, offset: 0, value: Array(value)))
        case (.readBlobRequest(let handle, let offset), .readBlobResponse(let value)):
            emit(.serverRead(connection: connection, handle: handle, offset: Int(offset), value: Array(value)))
        case (.readMultipleRequest(let handles), _), (.readMultipleVariableRequest(let handles), _):
            for handle in handles { emit(.serverRead(connection: connection, handle: handle, offset: 0, value: nil)) }
        case (.readByTypeRequest(_, _, let type), .readByTypeResponse(let list)) where !Self.isDeclaration(type):
            for entry in list.entries {
                emit(.serverRead(connection: connection, handle: entry.handle, offset: 0, value: Array(entry.value)))
            }
        default:
            break
        }
    }

    /// GATT declaration types (Core Vol 3 Part G §3.1-3.3), read by discovery rather than as values.
    static func isDeclaration(_ type: BluetoothUUID) -> Bool {
        type == .primaryService || type == .secondaryService || type == .include || type == .characteristic
    }
}
