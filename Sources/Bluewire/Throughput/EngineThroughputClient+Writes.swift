import BluewireCore
import BluewireHostEngine

/// `EngineThroughputClient`'s link for the write modes: every request straight to the engine.
struct EngineThroughputLink: ThroughputWriteLink {
    let connection: EngineConnection

    var clock: any HostClock { connection.host.clock }

    func write(_ value: [UInt8], to valueHandle: UInt16) async throws(ThroughputError) {
        _ = try await EngineThroughputClient(connection: connection).perform(.write(handle: valueHandle, value: value))
    }

    func read(_ valueHandle: UInt16) async throws(ThroughputError) -> [UInt8] {
        guard case .value(let value) = try await EngineThroughputClient(connection: connection).perform(.read(handle: valueHandle)) else {
            throw .characteristicNotFound(handle: valueHandle, mode: .writeWithoutResponse)
        }
        return value
    }

    func streamWriteCommands(_ stream: ATTStream) async throws(ThroughputError) -> (sent: Int, end: ATTStreamEnd) {
        let host = connection.host, handle = connection.handle
        guard !Task.isCancelled else { throw .engine(.cancelled) }
        let result = await withTaskCancellationHandler {
            await host.perform(.streamATT(connection: handle, stream), on: connection)
        } onCancel: {
            Task { await host.perform(.stopATTStream(connection: handle, .writeCommand), on: connection) }
        }
        switch result {
        case .success(.streamed(let sent, let end)): return (sent, end)
        case .success: return (0, .stopped)
        case .failure(let error): throw EngineThroughputClient.map(error)
        }
    }

    func stopWriteCommands() async {
        _ = await connection.host.perform(.stopATTStream(connection: connection.handle, .writeCommand), on: connection)
    }

    func writeCommandsSent() async -> Int? {
        await connection.host.attStreamSent(connection: connection.handle, pdu: .writeCommand)
    }
}
