import BluewireATT
import BluewireCore

extension GATTServer {
    /// Read (§3.4.4.3) and Read Blob (§3.4.4.5): the value from `offset` on, cut to ATT_MTU − 1.
    /// Read Blob past the end is Invalid Offset; exactly at the end it returns an empty part, which is
    /// how a client reading a long value learns it has everything.
    func read(_ handle: UInt16, offset: Int, opcode: ATTOpcode, _ connection: UInt16) -> ATTPDU {
        guard let index = database.index(of: handle) else { return errorResponse(opcode, handle, .invalidHandle) }
        switch readAttribute(at: index, offset: offset, connection: connection) {
        case .error(let error):
            return errorResponse(opcode, handle, error)
        case .value(let bytes):
            let part = bytes.prefix(mtu(for: connection) - 1)
            return opcode == .readRequest
                ? ATTPDU.readResponse(value: part)
                : ATTPDU.readBlobResponse(value: part)
        }
    }

    /// Read Multiple (§3.4.4.7) and Read Multiple Variable (§3.4.4.11). Every handle must be valid and
    /// readable, else the first failure is the answer with its handle. Read Multiple concatenates the
    /// values and cuts at ATT_MTU − 1; the variable form gives each value its length and cuts the
    /// last one that does not fit.
    func readMultiple(_ handles: ATTHandleList, variable: Bool, _ connection: UInt16) -> ATTPDU {
        let opcode: ATTOpcode = variable ? .readMultipleVariableRequest : .readMultipleRequest
        let mtu = self.mtu(for: connection)
        var values: [UInt8] = []
        var tuples = ReadMultipleVariableResponse()
        var full = false
        for handle in handles {
            guard let index = database.index(of: handle) else { return errorResponse(opcode, handle, .invalidHandle) }
            switch readAttribute(at: index, offset: 0, connection: connection) {
            case .error(let error):
                return errorResponse(opcode, handle, error)
            case .value(let bytes):
                // Keep checking the remaining handles after the PDU is full: their errors still win.
                guard !full else { continue }
                if variable {
                    full = !tuples.append(value: bytes, mtu: mtu)
                } else {
                    values.append(contentsOf: bytes.prefix(mtu - 1 - values.count))
                    full = values.count >= mtu - 1
                }
            }
        }
        return variable
            ? ATTPDU.readMultipleVariableResponse(tuples)
            : ATTPDU.readMultipleResponse(values: values[...])
    }
}
