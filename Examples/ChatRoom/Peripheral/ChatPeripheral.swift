import ArgumentParser
import Bluewire
import ExampleSupport

/// The chat room's peripheral: it keeps the room. Every message a central writes is relayed, as a
/// notification, to every central subscribed to the room (the writer included), and the last ten
/// can be read from the room characteristic. Several centrals at once: advertising resumes after
/// each connection. (The room itself, shared with chat-central, is `ChatRoom` in Examples/Support.)
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
        do {
            _ = try await room.open(on: host, name: name)
        } catch {
            exitWithError("\(error)")
        }
        let address = await host.advertisingAddress.map { "\($0)" } ?? "?"
        say("chat room \"\(name)\" open as \(address)")

        let events = await host.peripheralEvents()
        let relay = Task {
            await room.relay(events, on: host) { activity in
                switch activity {
                case .joined(let connection):
                    say("joined: \(connection.peer) (connection 0x\(hex(connection.handle, width: 4)))")
                case .left(let connection, let peer, let reason):
                    say("left: \(peer) (connection 0x\(hex(connection, width: 4)), \(reason))")
                case .listening(let connection, let on):
                    say("\(on ? "listening" : "not listening"): connection 0x\(hex(connection, width: 4))")
                case .message(let connection, let text, let reached):
                    say("message from 0x\(hex(connection, width: 4)) to \(reached): \(text)")
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
