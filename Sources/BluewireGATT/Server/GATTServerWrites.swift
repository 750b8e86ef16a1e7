import BluewireATT
import BluewireCore

extension GATTServer {
    /// Write Request (§3.4.5.1): checks, writes, and answers Write Response or the error.
    mutating func writeRequest(_ handle: UInt16, _ value: ArraySlice<UInt8>, _ connection: UInt16) -> ATTPDU {
        if let error = write(handle, value, connection, kind: .request) {
            return errorResponse(.writeRequest, handle, error)
        }
        return ATTPDU.writeResponse
    }

    /// Write Command (§3.4.5.3): the same write, but no response and errors are dropped.
    mutating func writeCommand(_ handle: UInt16, _ value: ArraySlice<UInt8>, _ connection: UInt16) {
        _ = write(handle, value, connection, kind: .command)
    }

    /// A Signed Write Command (§3.4.5.4) whose signature the Security Manager has verified (Core Vol 3
    /// Part C §10.4.2): written like a Write Command, to a characteristic value whose properties allow
    /// authenticated signed writes (Part G §3.3.1.1). Dropped otherwise, as commands get no answer.
    public mutating func verifiedSignedWrite(_ handle: UInt16, _ value: ArraySlice<UInt8>, from connection: UInt16) {
        guard let characteristic = database.characteristic(valueHandle: handle),
              characteristic.properties.contains(.authenticatedSignedWrites) else { return }
        _ = write(handle, value, connection, kind: .command)
    }

    mutating func write(
        _ handle: UInt16, _ value: ArraySlice<UInt8>, _ connection: UInt16, kind: GATTWriteKind
    ) -> ATTErrorCode? {
        guard let index = database.index(of: handle) else { return .invalidHandle }
        let level = connections[connection]?.securityLevel ?? .none
        if let error = writePermissionError(database.attributes[index].permissions, level) ?? valueWriteError(at: index) {
            return error
        }
        return writeAttribute(at: index, value: value, offset: 0, connection: connection, kind: kind)
    }

    /// Prepare Write (§3.4.6.1): queues the part after checking the handle and write permission, and
    /// echoes it back so the client can verify it. Offsets and lengths are checked on execution, as
    /// the specification says. The queue is bounded in entries and bytes: beyond either, Prepare
    /// Queue Full.
    mutating func prepareWrite(
        _ handle: UInt16, _ offset: Int, _ value: ArraySlice<UInt8>, _ connection: UInt16
    ) -> ATTPDU {
        guard let index = database.index(of: handle) else {
            return errorResponse(.prepareWriteRequest, handle, .invalidHandle)
        }
        let level = connections[connection]?.securityLevel ?? .none
        if let error = writePermissionError(database.attributes[index].permissions, level) ?? valueWriteError(at: index) {
            return errorResponse(.prepareWriteRequest, handle, error)
        }
        guard let state = connections[connection],
              state.preparedWrites.count < configuration.maximumPreparedWrites,
              state.preparedBytes + value.count <= configuration.maximumPreparedWriteBytes else {
            return errorResponse(.prepareWriteRequest, handle, .prepareQueueFull)
        }
        connections[connection]?.preparedWrites.append(PreparedWrite(handle: handle, offset: offset, value: Array(value)))
        connections[connection]?.preparedBytes += value.count
        return ATTPDU.prepareWriteResponse(handle: handle, offset: UInt16(truncatingIfNeeded: offset), partValue: value)
    }

    /// Execute Write (§3.4.6.3): flags 0x00 discards the queue; 0x01 writes it. Every attribute's parts
    /// are checked first (an offset past the value built so far is Invalid Offset, a result over 512
    /// bytes or a CCCD not left at 2 bytes is Invalid Attribute Value Length), and only if all pass is
    /// anything written, so a failed reliable write changes no cached value. Either way the queue is
    /// emptied. Reserved flag values are Invalid PDU.
    mutating func executeWrite(_ flags: ATTExecuteWriteFlags, _ connection: UInt16) -> ATTPDU {
        guard flags == .writeAllPreparedValues || flags == .cancelAllPreparedWrites else {
            return errorResponse(.executeWriteRequest, 0, .invalidPDU)
        }
        let queue = connections[connection]?.preparedWrites ?? []
        connections[connection]?.preparedWrites = []
        connections[connection]?.preparedBytes = 0
        guard flags == .writeAllPreparedValues else { return ATTPDU.executeWriteResponse }

        var plans: [PreparedWritePlan] = []
        var planned: [UInt16] = []
        for entry in queue where !planned.contains(entry.handle) {
            planned.append(entry.handle)
            switch plan(entry.handle, queue, connection) {
            case .failure(let error): return errorResponse(.executeWriteRequest, entry.handle, error)
            case .success(let plan): plans.append(plan)
            }
        }
        for plan in plans {
            for run in plan.runs {
                if let error = writeAttribute(
                    at: plan.index, value: run.value[...], offset: run.offset, connection: connection, kind: .executeWrite)
                {
                    return errorResponse(.executeWriteRequest, plan.handle, error)
                }
            }
        }
        return ATTPDU.executeWriteResponse
    }

    /// The writes one attribute's queued parts come to, or why they cannot be done.
    ///
    /// Values the server keeps and CCCDs are assembled in full from their current value, so the checks
    /// are exact. A value with a write handler is the application's, so its parts are only joined
    /// where contiguous and each run is handed over with its offset.
    func plan(_ handle: UInt16, _ queue: [PreparedWrite], _ connection: UInt16) -> PlanResult {
        guard let index = database.index(of: handle) else { return .failure(.invalidHandle) }
        let attribute = database.attributes[index]
        var runs: [WriteRun] = []
        if case .dynamic(let dynamic) = attribute.value, dynamic.write != nil {
            for entry in queue where entry.handle == handle {
                if let last = runs.last, last.offset + last.value.count == entry.offset {
                    runs[runs.count - 1].value.append(contentsOf: entry.value)
                } else {
                    runs.append(WriteRun(offset: entry.offset, value: entry.value))
                }
                guard entry.offset + entry.value.count <= maximumAttributeValueLength else {
                    return .failure(.invalidAttributeValueLength)
                }
            }
            return .success(PreparedWritePlan(handle: handle, index: index, runs: runs))
        }
        let configuration = clientConfigurationBytes(of: attribute, connection: connection)
        var value = Array(configuration ?? (attribute.cachedValue ?? [])[...])
        for entry in queue where entry.handle == handle {
            guard entry.offset <= value.count else { return .failure(.invalidOffset) }
            value.removeSubrange(entry.offset...)
            value.append(contentsOf: entry.value)
            guard value.count <= maximumAttributeValueLength else { return .failure(.invalidAttributeValueLength) }
        }
        if configuration != nil && value.count != 2 { return .failure(.invalidAttributeValueLength) }
        return .success(PreparedWritePlan(handle: handle, index: index, runs: [WriteRun(offset: 0, value: value)]))
    }
}

enum PlanResult {
    case success(PreparedWritePlan)
    case failure(ATTErrorCode)
}

struct PreparedWritePlan {
    var handle: UInt16
    var index: Int
    var runs: [WriteRun]
}

struct WriteRun {
    var offset: Int
    var value: [UInt8]
}
