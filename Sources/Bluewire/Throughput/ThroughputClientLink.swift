import BluewireCore
import BluewireGATT
import BluewireHostEngine

/// `ThroughputClient`'s link for the write modes: Write Requests and the sink report go through the
/// connection's GATT client (its operation queue), the Write Commands are the host engine's stream.
struct ThroughputClientLink: ThroughputWriteLink {
    let connection: Connection
    let gatt: GATTClient

    var clock: any HostClock { connection.host.clock }

    func write(_ value: [UInt8], to valueHandle: UInt16) async throws(ThroughputError) {
        do { try await gatt.write(value, to: valueHandle) } catch { throw ThroughputClient.map(error) }
    }

    func read(_ valueHandle: UInt16) async throws(ThroughputError) -> [UInt8] {
        do { return try await gatt.read(handle: valueHandle) } catch { throw ThroughputClient.map(error) }
    }

    func streamWriteCommands(_ stream: ATTStream) async throws(ThroughputError) -> (sent: Int, end: ATTStreamEnd) {
        do {
            return try await connection.host.streamWriteCommands(stream, on: connection.handle, link: connection.identity)
        } catch {
            throw ThroughputClient.map(error)
        }
    }

    func stopWriteCommands() async {
        await connection.host.stopATTStream(on: connection.handle, .writeCommand, link: connection.identity)
    }

    func writeCommandsSent() async -> Int? {
        await connection.host.attStreamSent(on: connection.handle, .writeCommand, link: connection.identity)
    }
}
