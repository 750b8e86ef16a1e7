import BluewireATT
import BluewireCore
import BluewireGATT

extension GATTClient {
    // MARK: Reads (each fires Read, then OperationCompleted)

    /// Reads a discovered characteristic's whole value: a Read Request, then Read Blob Requests while
    /// the parts come back full (Read Long Characteristic Values, Core Vol 3 Part G §4.8.3), so values
    /// longer than ATT_MTU − 1 arrive whole.
    /// - Throws: `.notDiscovered` if the characteristic is not (or no longer) in the cache.
    public func read(_ characteristic: GATTCharacteristic) async throws(GATTError) -> [UInt8] {
        try await operation { context throws(GATTError) in
            try self.requireDiscovered(characteristic)
            return try await self.phase(.read) { () throws(GATTError) in
                try await context.perform(ReadLongCharacteristicValues(handle: characteristic.valueHandle, mtu: await context.mtu))
            }
        }
    }

    /// Read Characteristic Value (§4.8.1) or Read Characteristic Descriptor (§4.12.1): one Read
    /// Request, at most ATT_MTU − 1 octets.
    public func read(handle: UInt16) async throws(GATTError) -> [UInt8] {
        try await operation { context throws(GATTError) in
            try await self.phase(.read) { () throws(GATTError) in try await context.perform(ReadCharacteristicValue(handle: handle)) }
        }
    }

    /// Read Long Characteristic Values / Descriptors (§4.8.3, §4.12.2): Read, then Read Blob at each
    /// offset until a part comes back short.
    public func readLong(handle: UInt16) async throws(GATTError) -> [UInt8] {
        try await operation { context throws(GATTError) in
            try await self.phase(.read) { () throws(GATTError) in
                try await context.perform(ReadLongCharacteristicValues(handle: handle, mtu: await context.mtu))
            }
        }
    }

    /// Read Multiple Characteristic Values (§4.8.4): the values of two or more handles concatenated
    /// (only a client that knows each length can split them).
    public func readMultiple(handles: [UInt16]) async throws(GATTError) -> [UInt8] {
        try await operation { context throws(GATTError) in
            try await self.phase(.read) { () throws(GATTError) in try await context.perform(ReadMultipleCharacteristicValues(handles: handles)) }
        }
    }

    /// Read Multiple Variable Length Characteristic Values (§4.8.5): one value per handle.
    public func readMultipleVariable(handles: [UInt16]) async throws(GATTError) -> [[UInt8]] {
        try await operation { context throws(GATTError) in
            try await self.phase(.read) { () throws(GATTError) in
                try await context.perform(ReadMultipleVariableLengthCharacteristicValues(handles: handles))
            }
        }
    }

    /// Read Using Characteristic UUID (§4.8.2): every value of type `uuid` in the handle range, with
    /// its handle (Read By Type).
    public func read(
        uuid: BluetoothUUID, startingHandle: UInt16 = 0x0001, endingHandle: UInt16 = 0xFFFF
    ) async throws(GATTError) -> [GATTHandleValue] {
        try await operation { context throws(GATTError) in
            try await self.phase(.read) { () throws(GATTError) in
                try await context.perform(
                    ReadUsingCharacteristicUUID(uuid: uuid, startingHandle: startingHandle, endingHandle: endingHandle))
            }
        }
    }

    // MARK: Writes (each fires Write, then OperationCompleted)

    /// Writes a discovered characteristic's value with a response: Write Characteristic Value
    /// (§4.9.3) when it fits one PDU (ATT_MTU − 3 octets), else Write Long Characteristic Values
    /// (§4.9.4, prepared writes).
    public func write(_ value: [UInt8], to characteristic: GATTCharacteristic) async throws(GATTError) {
        try await operation { context throws(GATTError) in
            try self.requireDiscovered(characteristic)
            try await self.phase(.write) { () throws(GATTError) in
                let mtu = await context.mtu
                if value.count <= mtu - 3 {
                    try await context.perform(WriteCharacteristicValue(handle: characteristic.valueHandle, value: value, mtu: mtu))
                } else {
                    try await context.perform(PreparedWrites.writeLong(handle: characteristic.valueHandle, value: value, mtu: mtu))
                }
            }
        }
    }

    /// Write Characteristic Value (§4.9.3) or Write Characteristic Descriptor (§4.12.3): one Write
    /// Request, acknowledged by the server. The value must fit ATT_MTU − 3 octets.
    public func write(_ value: [UInt8], to handle: UInt16) async throws(GATTError) {
        try await run(WriteValueOperation(client: self, handle: handle, value: value))
    }

    /// Write Without Response (§4.9.1): a Write Command, complete once handed to the bearer (the
    /// server never answers; it may drop it). The value must fit ATT_MTU − 3 octets.
    public func writeWithoutResponse(_ value: [UInt8], to handle: UInt16) async throws(GATTError) {
        try await operation { context throws(GATTError) in
            try await self.phase(.write) { () throws(GATTError) in try await WriteWithoutResponseOperation(handle: handle, value: value).execute(on: context) }
        }
    }

    /// Write Long Characteristic Values (§4.9.4): Prepare Write Requests of ATT_MTU − 5 octets, then
    /// Execute Write. A mismatched echo cancels the queue on the server, so nothing partial is written.
    public func writeLong(_ value: [UInt8], to handle: UInt16, offset: UInt16 = 0) async throws(GATTError) {
        try await operation { context throws(GATTError) in
            try await self.phase(.write) { () throws(GATTError) in
                try await context.perform(PreparedWrites.writeLong(handle: handle, value: value, offset: offset, mtu: await context.mtu))
            }
        }
    }

    /// Reliable Writes (§4.9.5): every value written to its handle, all or none, each part's echo
    /// checked.
    public func reliableWrite(_ writes: [(handle: UInt16, value: [UInt8])]) async throws(GATTError) {
        let writes = writes.map { GATTHandleValue(handle: $0.handle, value: $0.value) }
        try await operation { context throws(GATTError) in
            try await self.phase(.write) { () throws(GATTError) in
                try await context.perform(PreparedWrites.reliable(writes.map { ($0.handle, $0.value) }, mtu: await context.mtu))
            }
        }
    }

    func requireDiscovered(_ characteristic: GATTCharacteristic) throws(GATTError) {
        guard session.cache.contains(characteristic) else { throw .notDiscovered(handle: characteristic.valueHandle) }
    }
}

/// `GATTClient.write(_:to:)` as an operation value rather than a closure: its three stored words
/// (the client, the handle, the value) fit the queue's existential in place, where a closure's
/// captures took an allocation of their own on every write (the throughput tool's write mode runs
/// this once per Write Request).
struct WriteValueOperation: GATTOperation {
    let client: GATTClient
    let handle: UInt16
    let value: [UInt8]

    nonisolated(nonsending) func execute(on context: any ATTRequestPerformer) async throws(GATTError) {
        try await client.phase(.write) { () throws(GATTError) in
            try await context.perform(WriteCharacteristicValue(handle: handle, value: value, mtu: await context.mtu))
        }
    }
}
