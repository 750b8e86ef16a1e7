import Bluewire
import BluewireATT
import BluewireGATT
import BluewireHCI
import Testing

/// The handles of a made-up OTA service on the scripted device.
private enum OTA {
    static let status: UInt16 = 0x0020  // value: 0x00 idle; notifies [0x01, sequence] after each chunk
    static let statusCCCD: UInt16 = 0x0021
    static let data: UInt16 = 0x0030  // Write Without Response: [sequence] + chunk
    static let statusCharacteristic = GATTCharacteristic(
        handle: 0x001F, valueHandle: status, properties: [.read, .notify], uuid: .init(0xFFF1), endHandle: statusCCCD)
    static let handles: Set<UInt16> = [status, statusCCCD, data]

    static func device() async -> ScriptedATTPerformer {
        let performer = ScriptedATTPerformer(values: [status: [0x00], statusCCCD: [0x00, 0x00]])
        await performer.react(toWritesOn: data, notifying: status) { chunk in [0x01, chunk.first ?? 0] }
        return performer
    }
}

/// The composite operation's own error type: its own failures, its steps' GATT failures, and the
/// queue's ends (an `OperationFailure` of the application's, not `GATTError`).
enum FirmwareUpdateError: OperationFailure, Equatable {
    case deviceBusy([UInt8])
    case unexpectedStatus([UInt8])
    case gatt(GATTError)
    case ended(OperationError)

    init(_ end: OperationError) { self = .ended(end) }

    var queueEnd: OperationError? {
        if case .ended(let end) = self { return end }
        return nil
    }

    var isInsufficientSecurity: Bool {
        if case .gatt(let error) = self { return error.isInsufficientSecurity }
        return false
    }
}

/// A composite operation: read the status, subscribe to it, send each chunk and wait for the device to
/// acknowledge it in a status notification, unsubscribe. All its ATT exchanges happen on the context
/// it is given, inside one queue slot.
struct FirmwareUpdateOperation: GATTOperation {
    let image: [UInt8]
    let chunkSize: Int

    func execute(on context: any ATTRequestPerformer) async throws(FirmwareUpdateError) -> Int {
        let status = try await step { () throws(GATTError) in try await context.perform(ReadCharacteristicValue(handle: OTA.status)) }
        guard status == [0x00] else { throw .deviceBusy(status) }
        // Listen before subscribing so that the first acknowledgement cannot be missed.
        var acknowledgements = await context.notifications(for: OTA.status).makeAsyncIterator()
        _ = try await step { () throws(GATTError) in
            try await context.perform(
                ConfigureClientCharacteristicConfiguration.subscribe(to: OTA.statusCharacteristic, descriptorHandle: OTA.statusCCCD))
        }
        var sequence: UInt8 = 0
        for start in stride(from: 0, to: image.count, by: chunkSize) {
            let chunk = [sequence] + image[start..<min(start + chunkSize, image.count)]
            try await step { () throws(GATTError) in try await WriteWithoutResponseOperation(handle: OTA.data, value: chunk).execute(on: context) }
            guard let ack = await acknowledgements.next() else { throw .ended(.disconnected(reason: nil)) }
            guard ack == [0x01, sequence] else { throw .unexpectedStatus(Array(ack)) }
            sequence &+= 1
        }
        _ = try await step { () throws(GATTError) in
            try await context.perform(
                ConfigureClientCharacteristicConfiguration.unsubscribe(from: OTA.statusCharacteristic, descriptorHandle: OTA.statusCCCD))
        }
        return Int(sequence)
    }

    private func step<T>(_ body: () async throws(GATTError) -> T) async throws(FirmwareUpdateError) -> T {
        do throws(GATTError) {
            return try await body()
        } catch {
            throw .gatt(error)
        }
    }
}

/// Whether the events addressing `handles` form one unbroken run in `events`.
private func isContiguous(_ events: [PerformerEvent], of handles: Set<UInt16>) -> Bool {
    let positions = events.indices.filter { handles.contains(events[$0].handle) }
    guard let first = positions.first, let last = positions.last else { return false }
    return last - first + 1 == positions.count
}

@Suite("Operation queue: composite operations")
struct OperationQueueCompositeTests {
    @Test("An OTA update's ATT exchanges stay contiguous while unrelated callers read and write concurrently")
    func otaIsNeverInterleaved() async throws {
        let performer = await OTA.device()
        for handle in UInt16(0x40)..<0x50 { await performer.setValue([UInt8(handle)], for: handle) }
        // Hold the OTA's first request so that unrelated callers pile up while it runs.
        let gate = Gate()
        await performer.setGate(gate, for: OTA.status)
        let queue = GATTOperationQueue(performer: performer)
        let image = ramp(100)

        let before = await queue.submit(GATTOperations.read(handle: 0x40))
        let update = await queue.submit(FirmwareUpdateOperation(image: image, chunkSize: 16))
        await gate.arrived.wait()
        // Open the gate only after the first request is answered, so only that one was held.
        await performer.removeGate(for: OTA.status)

        try await withThrowingTaskGroup(of: Void.self) { group in
            for handle in UInt16(0x41)..<0x50 {
                group.addTask {
                    if handle % 2 == 0 {
                        _ = try await queue.run(GATTOperations.read(handle: handle))
                    } else {
                        try await queue.run(GATTOperations.write([0xAA], to: handle))
                    }
                }
                if handle == 0x44 { gate.open() }  // the rest arrive while the OTA is under way
            }
            #expect(try await update.value == 7)
            try await group.waitForAll()
        }
        #expect(try await before.value == [0x40])

        let events = await performer.events
        let otaEvents = events.filter { OTA.handles.contains($0.handle) }
        let expectedOTAExchanges = 10  // read status, subscribe, 7 chunks of 16 octets, unsubscribe
        #expect(otaEvents.count == expectedOTAExchanges)
        #expect(otaEvents.first == .request(.readRequest(handle: OTA.status)))
        #expect(otaEvents.last == .request(.writeRequest(handle: OTA.statusCCCD, value: [0x00, 0x00])))
        let unrelated = events.count - otaEvents.count
        #expect(unrelated == 16, "every unrelated read and write ran too")
        #expect(events.first?.handle == 0x40, "the read submitted before the OTA ran before it")
        #expect(isContiguous(events, of: OTA.handles), "OTA exchanges were interleaved: \(events.map(\.handle))")
        #expect(await performer.values[0x43] == [0xAA])
    }

    @Test("Without the queue the same callers do interleave, so the contiguity check can fail")
    func withoutQueueTheCheckDetectsInterleaving() async throws {
        let performer = await OTA.device()
        await performer.setValue([0x41], for: 0x41)
        let gate = Gate()
        await performer.setGate(gate, for: OTA.status)
        let update = Task { try await FirmwareUpdateOperation(image: ramp(40), chunkSize: 16).execute(on: performer) }
        await gate.arrived.wait()
        // A caller that bypasses the queue gets its request onto the bearer in the middle of the update.
        _ = try await performer.perform(ReadCharacteristicValue(handle: 0x41))
        gate.open()
        #expect(try await update.value == 3)
        #expect(!isContiguous(await performer.events, of: OTA.handles))
    }

    @Test("A disconnection during an OTA update fails it and everything queued behind it")
    func disconnectionDuringOTA() async throws {
        let performer = await OTA.device()
        await performer.setValue([0x41], for: 0x41)
        // The device stops acknowledging: the OTA waits for a notification that never comes.
        await performer.react(toWritesOn: OTA.data, notifying: 0x0099) { _ in [] }
        let queue = GATTOperationQueue(performer: performer)
        let update = await queue.submit(FirmwareUpdateOperation(image: ramp(40), chunkSize: 16))
        let queued = await queue.submit(GATTOperations.read(handle: 0x41))
        await performer.waitForEvents(count: 3)  // read status, subscribe, first chunk

        await queue.failAll(with: OperationError.disconnected(reason: 0x08))
        await performer.disconnect()
        // Each caller hears the link's end in its operation's own error type.
        await #expect(throws: FirmwareUpdateError.ended(.disconnected(reason: 0x08))) { try await update.value }
        await #expect(throws: GATTError.disconnected(HCIStatus(0x08))) { try await queued.value }
        #expect(await performer.events.allSatisfy { $0.handle != 0x41 }, "the queued read must not run")
    }
}
