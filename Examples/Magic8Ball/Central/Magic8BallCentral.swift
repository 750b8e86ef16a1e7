import ArgumentParser
import Bluewire
import ExampleSupport
import Foundation

/// Asks the Magic 8-Ball a question: connects, subscribes to the answer, writes the question,
/// prints the answer it is notified of, and disconnects.
@main
struct Magic8BallCentral: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "magic8ball-central",
        abstract: "Ask a BLE Magic 8-Ball a question and print its answer.")

    @Argument(help: "The question.")
    var question: String

    @Option(help: "The 8-Ball's address (default: the first one found by scanning).")
    var peer: String?

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
        let address = await findPeripheral(on: host, address: peer, service: Magic8BallProfile.service)
        do {
            let connection = try await host.connect(to: address)
            let gatt = await connection.gatt
            // Answers are longer than the default ATT_MTU's 20-octet notification payload.
            _ = try? await gatt.exchangeMTU()
            guard let service = try await gatt.discoverServices(uuid: Magic8BallProfile.service).first else {
                await host.release()
                exitWithError("\(address) is no Magic 8-Ball")
            }
            let characteristics = try await gatt.discoverCharacteristics(of: service)
            guard let questionCharacteristic = characteristics.first(where: { $0.uuid == Magic8BallProfile.question }),
                  let answerCharacteristic = characteristics.first(where: { $0.uuid == Magic8BallProfile.answer }) else {
                await host.release()
                exitWithError("\(address): the Magic 8-Ball service lacks its characteristics")
            }
            let answers = try await gatt.subscribe(to: answerCharacteristic)
            try await gatt.write(Array(question.utf8), to: questionCharacteristic)
            var iterator = answers.makeAsyncIterator()
            guard let answer = try await iterator.next() else {
                await host.release()
                exitWithError("no answer")
            }
            var value = Array(answer.value)
            // A notification carries at most ATT_MTU − 3 octets and a longer value is cut there
            // (Core Vol 3 Part G §4.10): a full one may be cut, so read the whole value (Read Blob).
            if value.count >= (await gatt.mtu) - 3 {
                value = try await gatt.readLong(handle: answerCharacteristic.valueHandle)
            }
            say(String(decoding: value, as: UTF8.self))
        } catch {
            await host.release()
            exitWithError("\(address): \(error)")
        }
        await host.release()
    }
}
