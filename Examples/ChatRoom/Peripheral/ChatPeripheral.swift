import ArgumentParser
import Bluewire
import ExampleSupport
import Synchronization

/// The chat room's peripheral: it keeps the room. Every message a central writes is relayed, as a
/// notification, to every central subscribed to the room (the writer included), and the last ten
/// can be read from the room characteristic. Several centrals at once: advertising resumes after
/// each connection.
@main
struct ChatPeripheral: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat-peripheral",
        abstract: "A BLE chat room: relays every message a central writes to every subscribed central.")

    @Option(help: "The room's advertised name.")
    var name = "Bluewire Chat"

    @OptionGroup var options: ExampleOptions

    func run() async throws {
        let host = await options.startHost()
        let room = ChatRoom()
        let handles: (message: UInt16, room: UInt16)
        do {
            handles = try await room.serve(on: host, name: name)
            try await host.startAdvertising(Advertisement(name: name, services: [ChatRoomProfile.service]))
        } catch {
            exitWithError("\(error)")
        }
        let address = await host.advertisingAddress.map { "\($0)" } ?? "?"
        say("chat room \"\(name)\" open as \(address)")

        let events = await host.peripheralEvents()
        let relay = Task {
            for await event in events {
                switch event {
                case .connected(let connection):
                    say("joined: \(connection.peer) (connection 0x\(hex(connection.handle, width: 4)))")
                case .disconnected(let connection, let peer, let reason):
                    say("left: \(peer) (connection 0x\(hex(connection, width: 4)), \(reason))")
                case .subscriptionChanged(let subscription) where subscription.valueHandle == handles.room:
                    say("\(subscription.notifications ? "listening" : "not listening"): connection 0x\(hex(subscription.connection, width: 4))")
                case .write(let write) where write.handle == handles.message:
                    // The write handler has checked the message; relay it to everyone in the room.
                    let text = String(decoding: write.value, as: UTF8.self)
                    room.record(write.value)
                    let reached = (try? await host.notify(handles.room, value: write.value)) ?? []
                    say("message from 0x\(hex(write.connection, width: 4)) to \(reached.count): \(text)")
                default:
                    break
                }
            }
        }
        let signal = await StopSignal.wait()
        relay.cancel()
        try? await host.stopAdvertising()
        await host.release()
        say("chat room closed (signal \(signal.map { "\($0)" } ?? "none"))")
    }
}

/// The room's state, shared by the GATT handlers (which run on the Host's executor) and the relay.
final class ChatRoom: Sendable {
    private let history = Mutex<[[UInt8]]>([])

    func record(_ message: [UInt8]) {
        history.withLock { history in
            history.append(message)
            if history.count > ChatRoomProfile.historyLength { history.removeFirst() }
        }
    }

    /// The recent messages, one per line: long, so centrals read it with Read Blob.
    var transcript: [UInt8] {
        history.withLock { Array($0.joined(separator: [0x0A])) }
    }

    /// Builds the database (GAP name, the chat service) and serves it; returns the value handles.
    func serve(on host: BluetoothHost, name: String) async throws -> (message: UInt16, room: UInt16) {
        var builder = GATTDatabaseBuilder()
        try builder.addService(.genericAccess)
        try builder.addCharacteristic(.deviceName, properties: [.read], permissions: [.read], value: .cached(Array(name.utf8)))
        try builder.addService(ChatRoomProfile.service)
        let message = try builder.addCharacteristic(
            ChatRoomProfile.message, properties: [.write, .writeWithoutResponse], permissions: [.write],
            value: .dynamic(GATTDynamicValue(write: { request throws(GATTAttributeError) in
                // An application error the central sees: a message is one non-empty UTF-8 text.
                guard request.offset == 0, !request.value.isEmpty,
                      request.value.count <= ChatRoomProfile.maximumMessageLength,
                      String(validating: request.value, as: UTF8.self) != nil else {
                    throw GATTAttributeError(.valueNotAllowed)
                }
            })))
        let room = try builder.addCharacteristic(
            ChatRoomProfile.room, properties: [.read, .notify], permissions: [.read],
            value: .dynamic(GATTDynamicValue(read: { [self] request throws(GATTAttributeError) in
                try request.part(of: transcript)
            })))
        await host.setDatabase(builder.build())
        return (message.valueHandle, room.valueHandle)
    }
}
