import ArgumentParser
import Bluewire
import ExampleSupport
import Synchronization

/// The OTA (firmware update) example's peripheral: receives an image in chunks from an authorized
/// central, notifies its progress on the status characteristic, and checks the image's length and
/// CRC-32 when the central finishes. The received image survives disconnections: a central that
/// reconnects goes on where it was. `--drop-after N` drops the link (a real LL disconnection) once,
/// after the Nth chunk, to show a central resuming.
@main
struct OTAPeripheral: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ota-peripheral",
        abstract: "A BLE firmware-update target: receives an image in chunks and verifies its CRC-32.")

    @Option(help: "The advertised name.")
    var name = "Bluewire OTA"

    @Option(help: "The access token a central must write before it may update.")
    var token = OTAProfile.defaultToken

    @Option(name: .customLong("drop-after"), help: ArgumentHelp(
        "Disconnect the central once, after its Nth chunk (to show a transfer resuming).", valueName: "chunks"))
    var dropAfter: Int?

    @OptionGroup var options: ExampleOptions

    func run() async throws {
        let host = await options.startHost()
        let update = FirmwareUpdate(token: Array(token.utf8))
        let handles: (status: UInt16, data: UInt16)
        do {
            handles = try await update.serve(on: host, name: name)
            try await host.startAdvertising(Advertisement(name: name, services: [OTAProfile.service]))
        } catch {
            exitWithError("\(error)")
        }
        let address = await host.advertisingAddress.map { "\($0)" } ?? "?"
        say("\(name) ready as \(address)")

        let events = await host.peripheralEvents()
        let dropAfter = self.dropAfter
        let worker = Task {
            var chunks = 0
            var dropped = false
            var lastReported = -1
            for await event in events {
                switch event {
                case .connected(let connection):
                    say("connected: \(connection.peer)")
                case .disconnected(let connection, let peer, let reason):
                    update.linkEnded(connection)
                    say("disconnected: \(peer) (\(reason))")
                case .write(let write) where write.handle == handles.status:
                    if write.value.first == 0x01 { update.grantSeen() }
                    let status = update.status
                    if write.value.first == 0x02 { say("receiving \(status.expected) bytes") }
                    if write.value.first == 0x03 { say("image \(status)") }
                    if let central = await host.connection(of: event) {
                        _ = try? await host.notify(handles.status, value: status.bytes, to: central)
                    }
                case .write(let write) where write.handle == handles.data:
                    chunks += 1
                    let status = update.status
                    let central = await host.connection(of: event)
                    if let central { _ = try? await host.notify(handles.status, value: status.bytes, to: central) }
                    // A line per quarter of the image.
                    let quarter = status.expected > 0 ? status.received * 4 / status.expected : 0
                    if quarter > lastReported {
                        lastReported = quarter
                        say("received \(status.received)/\(status.expected) bytes")
                    }
                    if let dropAfter, chunks == dropAfter, !dropped {
                        dropped = true
                        say("dropping the link after chunk \(chunks)")
                        update.linkEnded(write.connection)
                        try? await central?.disconnect()
                    }
                default:
                    break
                }
            }
        }
        _ = await StopSignal.wait()
        worker.cancel()
        await host.release()
        say("\(name) stopped")
    }
}

/// The update's state, shared by the GATT handlers (on the Host's executor, synchronously) and the
/// event loop.
final class FirmwareUpdate: Sendable {
    struct State {
        var status = OTAStatus(state: .idle, received: 0, expected: 0, crc: 0)
        var expectedCRC: UInt32 = 0
        var image: [UInt8] = []
        /// Links that wrote the token, with the grant's number.
        var grants: [UInt16: UInt64] = [:]
        var grantsMade: UInt64 = 0
        /// Grants whose write event the event loop has seen: those are older than any disconnection it
        /// sees next (events come in order), so only they end with a link. A new link that reuses
        /// the handle and authorizes before the loop hears of the old link's end keeps its grant.
        var grantsSeen: UInt64 = 0
    }

    let token: [UInt8]
    private let state = Mutex(State())

    init(token: [UInt8]) {
        self.token = token
    }

    var status: OTAStatus { state.withLock { $0.status } }

    func grantSeen() { state.withLock { $0.grantsSeen += 1 } }

    func linkEnded(_ connection: UInt16) {
        state.withLock { state in
            if let grant = state.grants[connection], grant <= state.grantsSeen { state.grants[connection] = nil }
        }
    }

    /// Builds the database (GAP name, the OTA service) and serves it; returns the value handles.
    func serve(on host: BluetoothHost, name: String) async throws -> (status: UInt16, data: UInt16) {
        var builder = GATTDatabaseBuilder()
        try builder.addService(.genericAccess)
        try builder.addCharacteristic(.deviceName, properties: [.read], permissions: [.read], value: .cached(Array(name.utf8)))
        try builder.addService(OTAProfile.service)
        let status = try builder.addCharacteristic(
            OTAProfile.status, properties: [.read, .write, .notify], permissions: [.read, .write],
            value: .dynamic(GATTDynamicValue(
                read: { [self] request throws(GATTAttributeError) in try request.part(of: self.status.bytes) },
                write: { [self] request throws(GATTAttributeError) in try command(request) })))
        let data = try builder.addCharacteristic(
            OTAProfile.data, properties: [.write], permissions: [.write],
            value: .dynamic(GATTDynamicValue(write: { [self] request throws(GATTAttributeError) in try chunk(request) })))
        await host.setDatabase(builder.build())
        return (status.valueHandle, data.valueHandle)
    }

    private func command(_ request: GATTWriteRequest) throws(GATTAttributeError) {
        guard request.offset == 0, let command = request.value.first else { throw GATTAttributeError(.valueNotAllowed) }
        try state.withLock { (state: inout State) throws(GATTAttributeError) in
            if command == 0x01 {
                guard Array(request.value.dropFirst()) == token else { throw GATTAttributeError(.valueNotAllowed) }
                state.grantsMade += 1
                state.grants[request.connection] = state.grantsMade
                return
            }
            guard state.grants[request.connection] != nil else { throw GATTAttributeError(.insufficientAuthorization) }
            switch command {
            case 0x02 where request.value.count == 9:
                let length = Int(OTAProfile.readLittleEndian(request.value[1..<5]))
                state.expectedCRC = OTAProfile.readLittleEndian(request.value[5..<9])
                state.image = []
                state.image.reserveCapacity(length)
                state.status = OTAStatus(state: .receiving, received: 0, expected: length, crc: OTAProfile.crc32([]))
            case 0x03 where request.value.count == 1:
                guard state.status.state == .receiving || state.status.state == .verified else {
                    throw GATTAttributeError(.valueNotAllowed)
                }
                let complete = state.status.received == state.status.expected && state.status.crc == state.expectedCRC
                state.status.state = complete ? .verified : .failed
            default:
                throw GATTAttributeError(.valueNotAllowed)
            }
        }
    }

    private func chunk(_ request: GATTWriteRequest) throws(GATTAttributeError) {
        guard request.offset == 0, let (offset, bytes) = OTAProfile.parseChunk(request.value) else {
            throw GATTAttributeError(.invalidAttributeValueLength)
        }
        try state.withLock { (state: inout State) throws(GATTAttributeError) in
            guard state.grants[request.connection] != nil else { throw GATTAttributeError(.insufficientAuthorization) }
            guard state.status.state == .receiving else { throw GATTAttributeError(.valueNotAllowed) }
            let received = state.status.received
            // Sent again after a drop ate the response: already here.
            if offset + bytes.count <= received { return }
            guard offset == received, received + bytes.count <= state.status.expected else {
                throw GATTAttributeError(.invalidOffset)
            }
            state.image += bytes
            state.status.received += bytes.count
            state.status.crc = OTAProfile.crc32(bytes, continuing: state.status.crc)
        }
    }
}
