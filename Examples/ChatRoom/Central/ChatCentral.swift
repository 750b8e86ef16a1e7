import ArgumentParser
import Bluewire
import ExampleSupport
import Foundation

/// A chat room member: joins a room if it finds one, else hosts the room itself. As a member it
/// connects to the room, prints the recent messages and then every message anyone writes, and sends
/// each line of standard input (or each --say) as "nick: line". As the host it serves and advertises
/// the room as chat-peripheral does (`ChatRoom` in Examples/Support), prints every message members
/// write and posts its own lines to them. Leaves (or closes the room) at the end of input.
@main
struct ChatCentral: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat-central",
        abstract: "Join a BLE chat room (or host one if none is found): send lines of standard input, print everyone's messages.")

    @Option(help: "Your name in the room.")
    var nick: String

    @Option(help: "The room's address (default: the first room found by scanning).")
    var peer: String?

    @Option(name: .customLong("say"), help: "A message to send before reading standard input (repeatable).")
    var messages: [String] = []

    @Flag(name: .customLong("no-stdin"), help: "Send only the --say messages, then leave.")
    var noStandardInput = false

    @Option(name: .customLong("join-window"), help: "Seconds to look for a room before hosting one.")
    var joinWindow = 3

    @Flag(name: .customLong("no-host"), help: "Only join: fail if no room is found (scanning 10 s).")
    var noHost = false

    @Option(help: "The room's advertised name when this program hosts it.")
    var room = "Bluewire Chat"

    @OptionGroup var options: ExampleOptions

    func run() async throws {
        let host = await options.startHost()
        // SIGINT/SIGTERM: cancel the attempt or disconnect before exiting (a link left up blocks
        // the controller for the next program).
        let stop = Task {
            // nil: cancelled below, the command ended by itself.
            guard await StopSignal.wait() != nil else { return }
            await host.release()
            Foundation.exit(130)
        }
        defer { stop.cancel() }
        if peer == nil, !noHost {
            guard let address = await scanForRoom(on: host, within: .seconds(Int64(joinWindow))) else {
                await hostRoom(on: host)
                return
            }
            await join(address, on: host)
        } else {
            await join(await findPeripheral(on: host, address: peer, service: ChatRoomProfile.service), on: host)
        }
    }

    /// Hosts the room: serves and advertises it, prints what members write, posts this program's
    /// own lines as "nick: line" (printing them too, as a member hears its own messages relayed).
    func hostRoom(on host: BluetoothHost) async {
        let chat = ChatRoom()
        do {
            _ = try await chat.open(on: host, name: room)
        } catch {
            await host.release()
            exitWithError("hosting the room failed: \(error)")
        }
        let address = await host.advertisingAddress.map { "\($0)" } ?? "?"
        say("hosting room \"\(room)\" as \(address) (nick \(nick))")
        let events = await host.peripheralEvents()
        let relay = Task {
            await chat.relay(events, on: host) { activity in
                switch activity {
                case .joined(let connection): say("(\(connection.peer) joined)")
                case .left(_, let peer, _): say("(\(peer) left)")
                case .listening: break
                case .message(_, let text, _): say(text)
                }
            }
        }
        for text in messages { await post(text, in: chat, on: host) }
        if !noStandardInput {
            for await line in standardInputLines() where !line.isEmpty { await post(line, in: chat, on: host) }
        }
        relay.cancel()
        try? await host.stopAdvertising()
        await host.release()
    }

    func post(_ text: String, in chat: ChatRoom, on host: BluetoothHost) async {
        let line = "\(nick): \(text)"
        await chat.post(Array(line.utf8), on: host)
        say(line)
    }

    /// Joins the room at `address` as a member.
    func join(_ address: BluetoothAddress, on host: BluetoothHost) async {
        let inbox = Inbox()
        do {
            let connection = try await host.connect(to: address)
            let gatt = await connection.gatt
            let mtu = try await gatt.exchangeMTU()
            guard let service = try await gatt.discoverServices(uuid: ChatRoomProfile.service).first else {
                await host.release()
                exitWithError("\(address) has no chat room")
            }
            let characteristics = try await gatt.discoverCharacteristics(of: service)
            guard let message = characteristics.first(where: { $0.uuid == ChatRoomProfile.message }),
                  let room = characteristics.first(where: { $0.uuid == ChatRoomProfile.room }) else {
                await host.release()
                exitWithError("\(address): the chat room service lacks its characteristics")
            }
            let history = try await gatt.read(room)
            for line in history.split(separator: 0x0A) { say("history: " + String(decoding: line, as: UTF8.self)) }
            let subscription = try await gatt.subscribe(to: room)
            say("joined \(address) as \(nick) (mtu \(mtu))")
            let listener = Task {
                do {
                    for try await notification in subscription {
                        let text = String(decoding: notification.value, as: UTF8.self)
                        say(text)
                        await inbox.received(text)
                    }
                } catch {
                    say("room closed: \(error)")
                }
                await inbox.close()
            }
            for text in messages { try await send(text, to: message, gatt: gatt, inbox: inbox) }
            if !noStandardInput {
                for await line in standardInputLines() where !line.isEmpty {
                    try await send(line, to: message, gatt: gatt, inbox: inbox)
                }
            }
            listener.cancel()
        } catch {
            await host.release()
            exitWithError("\(address): \(error)")
        }
        await host.release()
    }

    /// Writes one message (with response: the room refuses empty, overlong or non-UTF-8 ones) and
    /// waits for the room to relay it back, so a message is known delivered before the next.
    func send(_ text: String, to characteristic: GATTCharacteristic, gatt: GATTClient, inbox: Inbox) async throws {
        let line = "\(nick): \(text)"
        try await gatt.write(Array(line.utf8), to: characteristic)
        if await !inbox.wait(for: line, within: .seconds(5)) { say("(no echo of: \(line))") }
    }
}

/// Messages received, for `send` to see its own message come back.
actor Inbox {
    private var seen: [String] = []
    private var waiters: [(text: String, continuation: CheckedContinuation<Bool, Never>)] = []
    private var closed = false

    func received(_ text: String) {
        seen.append(text)
        if seen.count > 64 { seen.removeFirst() }
        for (index, waiter) in waiters.enumerated().reversed() where waiter.text == text {
            waiters.remove(at: index)
            waiter.continuation.resume(returning: true)
        }
    }

    func close() {
        closed = true
        for waiter in waiters { waiter.continuation.resume(returning: false) }
        waiters.removeAll()
    }

    func wait(for text: String, within timeout: Duration) async -> Bool {
        if let index = seen.firstIndex(of: text) {
            seen.remove(at: index)
            return true
        }
        if closed { return false }
        let timer = Task {
            try await Task.sleep(for: timeout)
            self.expire(text)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { waiters.append((text, $0)) }
    }

    private func expire(_ text: String) {
        guard let index = waiters.firstIndex(where: { $0.text == text }) else { return }
        waiters.remove(at: index).continuation.resume(returning: false)
    }
}
