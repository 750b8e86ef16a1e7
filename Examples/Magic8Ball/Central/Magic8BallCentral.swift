import ArgumentParser
import Bluewire
import BluewireCore
import BluewireGATT
import ExampleSupport

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
        let address = await findPeripheral(on: host, address: peer, service: Magic8BallProfile.service)
        do {
            let connection = try await host.connect(to: address)
            let gatt = await connection.gatt
            guard let service = try await gatt.discoverServices(uuid: Magic8BallProfile.service).first else {
                exitWithError("\(address) is no Magic 8-Ball")
            }
            let characteristics = try await gatt.discoverCharacteristics(of: service)
            guard let questionCharacteristic = characteristics.first(where: { $0.uuid == Magic8BallProfile.question }),
                  let answerCharacteristic = characteristics.first(where: { $0.uuid == Magic8BallProfile.answer }) else {
                exitWithError("\(address): the Magic 8-Ball service lacks its characteristics")
            }
            let answers = try await gatt.subscribe(to: answerCharacteristic)
            try await gatt.write(Array(question.utf8), to: questionCharacteristic)
            var iterator = answers.makeAsyncIterator()
            guard let answer = try await iterator.next() else { exitWithError("no answer") }
            say(String(decoding: answer.value, as: UTF8.self))
            try await connection.disconnect()
        } catch {
            exitWithError("\(error)")
        }
        await host.close()
    }
}
