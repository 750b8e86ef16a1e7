import ArgumentParser
import Bluewire
import ExampleSupport
import Foundation
import Synchronization

/// Asks Magic 8-Balls a question: finds up to `--count` of them (or takes the `--peer` addresses)
/// with a `PeripheralMap`, and as each one is ready (connected, MTU exchanged, service discovered)
/// subscribes to its answer, writes the question and prints the answer it is notified of. With one
/// ball the line is the answer alone; with several each line is "ADDRESS: answer". Exits 0 when
/// every ball found has answered, 1 if any failed (each failure on stderr).
@main
struct Magic8BallCentral: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "magic8ball-central",
        abstract: "Ask BLE Magic 8-Balls a question and print each one's answer.")

    @Argument(help: "The question.")
    var question: String

    @Option(help: "A ball's address (repeatable; default: the balls found by scanning).")
    var peer: [String] = []

    @Option(help: "The most balls to ask when scanning.")
    var count = 3

    @Option(name: .customLong("scan-time"), help: "Seconds to scan for balls at most (less once --count are found).")
    var scanTime = 5

    @OptionGroup var options: ExampleOptions

    func run() async throws {
        let host = await options.startHost()
        let map = PeripheralMap(host: host, options: PeripheralMap.Options(
            filter: AdvertisingFilter(serviceUUIDs: [Magic8BallProfile.service]), limit: count,
            scanDuration: .seconds(Int64(scanTime)), services: [Magic8BallProfile.service]))
        // SIGINT/SIGTERM: cancel the attempt or disconnect before exiting (a link left up blocks
        // the controller for the next program).
        let stop = Task {
            // nil: cancelled below, the command ended by itself.
            guard await StopSignal.wait() != nil else { return }
            await map.close()
            await host.release()
            Foundation.exit(130)
        }
        defer { stop.cancel() }
        do {
            if peer.isEmpty {
                try await map.start()
            } else {
                try await map.start(addresses: peer.map { address in
                    guard let parsed = BluetoothAddress(parsing: address) else { exitWithError("invalid address \(address)") }
                    return address.contains("/") ? parsed : BluetoothAddress(value: parsed.value, type: .random)
                })
            }
        } catch {
            exitWithError("\(error)")
        }
        let failures = await askEach(on: map)
        await map.close()
        await host.release()
        if failures > 0 { Foundation.exit(1) }
    }

    /// Asks each ball as it becomes ready; returns how many failed once every ball found has
    /// answered or failed.
    func askEach(on map: PeripheralMap) async -> Int {
        let (outcomes, outcome) = AsyncStream<Bool>.makeStream()
        let question = Array(self.question.utf8)
        let watcher = Task {
            var several = false
            var asked: Set<BluetoothAddress> = []
            for await event in map.events {
                switch event {
                case .scanFinished(let found, let error):
                    if let error { warn("\(error)") }
                    guard !found.isEmpty else {
                        exitWithError("no device advertising \(Magic8BallProfile.service) found")
                    }
                    several = found.count > 1
                    total.withLock { $0 = found.count }
                    outcome.yield(true)
                case .ready(let ball):
                    asked.insert(ball.address)
                    let prefix = several ? "\(ball.address): " : ""
                    Task {
                        do {
                            say(prefix + (try await Self.ask(ball, question)))
                            outcome.yield(true)
                        } catch {
                            warn("\(ball.address): \(error)")
                            outcome.yield(false)
                        }
                    }
                case .failed(let address, let error):
                    warn("\(address): \(error)")
                    outcome.yield(false)
                case .disconnected(let address, let reason) where !asked.contains(address):
                    // Lost before it was ready (once asked, the question itself fails).
                    warn("\(address): disconnected: \(reason)")
                    outcome.yield(false)
                default:
                    break
                }
            }
        }
        defer { watcher.cancel() }
        // The first outcome is the end of the scan, which says how many balls there are.
        var settled = -1, failures = 0
        for await success in outcomes {
            settled += 1
            if !success { failures += 1 }
            if settled == total.withLock({ $0 }) { break }
        }
        return failures
    }

    /// Subscribes to the answer, writes the question and returns the answer the ball notifies.
    static func ask(_ ball: MappedPeripheral, _ question: [UInt8]) async throws -> String {
        let questionCharacteristic = try ball.characteristic(Magic8BallProfile.question)
        let answerCharacteristic = try ball.characteristic(Magic8BallProfile.answer)
        let answers = try await answerCharacteristic.subscribe()
        try await questionCharacteristic.write(question)
        var iterator = answers.makeAsyncIterator()
        guard let answer = try await iterator.next() else { throw AnswerMissing() }
        var value = Array(answer.value)
        // A notification carries at most ATT_MTU − 3 octets and a longer value is cut there
        // (Core Vol 3 Part G §4.10): a full one may be cut, so read the whole value (Read Blob).
        if value.count >= ball.mtu - 3 {
            value = try await answerCharacteristic.read()
        }
        return String(decoding: value, as: UTF8.self)
    }

    struct AnswerMissing: Error, CustomStringConvertible {
        var description: String { "no answer" }
    }
}

/// How many balls the scan found (set once, before any of them can settle).
private let total = Mutex<Int>(-1)

/// One line on stderr.
private func warn(_ message: String) {
    FileHandle.standardError.write(Data(("error: " + message + "\n").utf8))
}
