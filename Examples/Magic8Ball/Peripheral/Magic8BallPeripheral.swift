import ArgumentParser
import Bluewire
import ExampleSupport
import Synchronization

/// The Magic 8-Ball: a central writes a question, and the ball notifies that central of its
/// answer (the same question always gets the same answer). The answer characteristic also reads
/// as the last answer given to the central reading it: a dynamic value, per connection.
@main
struct Magic8BallPeripheral: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "magic8ball-peripheral",
        abstract: "A BLE Magic 8-Ball: write a question, get notified of the answer.")

    @Option(help: "The advertised name.")
    var name = "Magic 8-Ball"

    @OptionGroup var options: ExampleOptions

    func run() async throws {
        let host = await options.startHost()
        let lastAnswers = Mutex<[UInt16: [UInt8]]>([:])
        let question: UInt16, answer: UInt16
        do {
            var builder = GATTDatabaseBuilder()
            try builder.addService(.genericAccess)
            try builder.addCharacteristic(.deviceName, properties: [.read], permissions: [.read], value: .cached(Array(name.utf8)))
            try builder.addService(Magic8BallProfile.service)
            question = try builder.addCharacteristic(
                Magic8BallProfile.question, properties: [.write], permissions: [.write],
                value: .dynamic(GATTDynamicValue(write: { request throws(GATTAttributeError) in
                    guard request.offset == 0, !request.value.isEmpty else { throw GATTAttributeError(.valueNotAllowed) }
                }))).valueHandle
            answer = try builder.addCharacteristic(
                Magic8BallProfile.answer, properties: [.read, .notify], permissions: [.read],
                value: .dynamic(GATTDynamicValue(read: { request throws(GATTAttributeError) in
                    try request.part(of: lastAnswers.withLock { $0[request.connection] } ?? [])
                }))).valueHandle
            await host.setDatabase(builder.build())
            try await host.startAdvertising(Advertisement(name: name, services: [Magic8BallProfile.service]))
        } catch {
            exitWithError("\(error)")
        }
        let address = await host.advertisingAddress.map { "\($0)" } ?? "?"
        say("\(name) ready as \(address)")

        let events = await host.peripheralEvents()
        let oracle = Task {
            for await event in events {
                switch event {
                case .connected(let connection):
                    say("connected: \(connection.peer)")
                case .disconnected(let connection, let peer, _):
                    lastAnswers.withLock { $0[connection] = nil }
                    say("disconnected: \(peer)")
                case .write(let write) where write.handle == question:
                    let reply = Array(Magic8BallProfile.answer(to: write.value).utf8)
                    lastAnswers.withLock { $0[write.connection] = reply }
                    // Only the asker hears the answer, if it subscribed (and is still connected).
                    var told = false
                    if let asker = await host.connection(of: event) {
                        told = (try? await host.notify(answer, value: reply, to: asker)) ?? false
                    }
                    say("\"\(String(decoding: write.value, as: UTF8.self))\" -> \"\(String(decoding: reply, as: UTF8.self))\"\(told ? "" : " (not subscribed)")")
                default:
                    break
                }
            }
        }
        _ = await StopSignal.wait()
        oracle.cancel()
        await host.release()
        say("\(name) stopped")
    }
}
