import Bluewire
import Synchronization

/// The chat room's server side, shared by chat-peripheral (which only keeps the room) and
/// chat-central (which hosts the room itself when it finds none to join): the GATT database, the
/// history, and the relay of every message to every subscribed central.
public final class ChatRoom: Sendable {
    /// The room's value handles in the served database.
    public struct Handles: Sendable {
        public var message: UInt16
        public var room: UInt16
    }

    /// What the relay saw, for the program to print.
    public enum Activity: Sendable {
        case joined(Connection)
        case left(connection: UInt16, peer: BluetoothAddress, reason: HCIStatus)
        case listening(connection: UInt16, Bool)
        /// A message a central wrote, relayed to `reached` subscribed connections.
        case message(from: UInt16, text: String, reached: Int)
    }

    private let history = Mutex<[[UInt8]]>([])
    private let served = Mutex<Handles?>(nil)

    public init() {}

    /// Adds a message to the history (the last `ChatRoomProfile.historyLength` are kept).
    public func record(_ message: [UInt8]) {
        history.withLock { history in
            history.append(message)
            if history.count > ChatRoomProfile.historyLength { history.removeFirst() }
        }
    }

    /// The recent messages, one per line: long, so centrals read it with Read Blob.
    public var transcript: [UInt8] {
        history.withLock { Array($0.joined(separator: [0x0A])) }
    }

    /// Builds the database (GAP name, the chat service), serves it and starts advertising the
    /// service under `name`. Returns the value handles.
    public func open(on host: BluetoothHost, name: String) async throws -> Handles {
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
        let handles = Handles(message: message.valueHandle, room: room.valueHandle)
        served.withLock { $0 = handles }
        try await host.startAdvertising(Advertisement(name: name, services: [ChatRoomProfile.service]))
        return handles
    }

    /// Records `message` and notifies every subscribed central of it; returns how many it reached.
    /// The host's own messages (chat-central hosting the room) go out this way too.
    @discardableResult
    public func post(_ message: [UInt8], on host: BluetoothHost) async -> Int {
        guard let handles = served.withLock({ $0 }) else { return 0 }
        record(message)
        return ((try? await host.notify(handles.room, value: message)) ?? []).count
    }

    /// Relays every message centrals write until `events` ends or the task is cancelled, reporting
    /// what happens to `report`.
    public func relay(
        _ events: AsyncStream<PeripheralEvent>, on host: BluetoothHost, report: @Sendable (Activity) -> Void
    ) async {
        guard let handles = served.withLock({ $0 }) else { return }
        for await event in events {
            switch event {
            case .connected(let connection):
                report(.joined(connection))
            case .disconnected(let connection, let peer, let reason):
                report(.left(connection: connection, peer: peer, reason: reason))
            case .subscriptionChanged(let subscription) where subscription.valueHandle == handles.room:
                report(.listening(connection: subscription.connection, subscription.notifications))
            case .write(let write) where write.handle == handles.message:
                // The write handler has checked the message; relay it to everyone in the room.
                let reached = await post(write.value, on: host)
                report(.message(from: write.connection, text: String(decoding: write.value, as: UTF8.self), reached: reached))
            default:
                break
            }
        }
    }
}
