import ArgumentParser
import Bluewire
import ExampleSupport
import Foundation
import Synchronization

/// The OTA example's central: updates a peripheral's image through a `RemotePeripheral`, every
/// step a command on the peripheral's queue: connect → authorize → read status → subscribe → begin →
/// write the chunks → finish → read status → unsubscribe → disconnect. With auto-connect attached,
/// a link that drops mid-transfer is brought back and the interrupted chunk written again; the
/// access token is written again on the new link by the authorizer. The run ends by checking the
/// peripheral's status: verified, with the image's length and CRC-32.
@main
struct OTACentral: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ota-central",
        abstract: "Send an image to a BLE OTA peripheral in chunks and check that it arrived whole.")

    @Option(help: "The peripheral's address (default: the first one found by scanning).")
    var peer: String?

    @Option(help: "The image to send (default: a generated test image of --size bytes).")
    var image: String?

    @Option(help: "Size of the generated test image, in bytes.")
    var size = 16_384

    @Option(help: "The peripheral's access token.")
    var token = OTAProfile.defaultToken

    @Option(name: .customLong("resume-attempts"), help: "How many times one step may be resumed on a new link after a drop.")
    var resumeAttempts = 3

    @OptionGroup var options: ExampleOptions

    func run() async throws {
        let bytes: [UInt8]
        if let image {
            guard let data = FileManager.default.contents(atPath: image) else { exitWithError("cannot read \(image)") }
            bytes = Array(data)
        } else {
            bytes = OTAProfile.testImage(length: size)
        }
        let host = await options.startHost()
        let stop = Task {
            guard await StopSignal.wait() != nil else { return }
            await host.release()
            Foundation.exit(130)
        }
        defer { stop.cancel() }
        let address = await findPeripheral(on: host, address: peer, service: OTAProfile.service)
        do {
            try await update(RemotePeripheral(host: host, peer: address), with: bytes)
        } catch {
            await host.release()
            exitWithError("\(address): \(error)")
        }
        await host.release()
    }

    func update(_ peripheral: RemotePeripheral, with image: [UInt8]) async throws {
        await peripheral.attachAutoConnect(resumeAttempts: resumeAttempts)
        await peripheral.attach(AutoAuthorizeDecorator(authorizer: TokenAuthorizer(peripheral: peripheral, token: token)))
        let events = await peripheral.events()
        let reporter = Task {
            for await event in events {
                switch event {
                case .connected(let connection, let count):
                    say(count == 1 ? "connected to \(connection.peer)" : "reconnected (link \(count))")
                case .disconnected(let reason):
                    say("disconnected: \(reason)")
                case .resubscribed(let count):
                    say("resubscribed (\(count))")
                default:
                    break
                }
            }
        }
        defer { reporter.cancel() }
        let crc = OTAProfile.crc32(image)
        let started = ContinuousClock.now

        // The first steps, queued at once: each runs when the one before it is done.
        let connect = await peripheral.submit(peripheral.connectOperation())
        let authorize = await peripheral.submit(peripheral.authorizeOperation())
        let initial = await peripheral.submit(peripheral.readOperation(OTAProfile.status, in: OTAProfile.service, timeout: .seconds(10)))
        let subscribe = await peripheral.submit(peripheral.subscribeOperation(to: OTAProfile.status, in: OTAProfile.service))
        try await connect.value
        try await authorize.value
        guard let before = OTAStatus(try await initial.value) else { throw OTAFailure("the status characteristic reads no OTA status") }
        say("status: \(before)")
        let subscription = try await subscribe.value
        let progress = Task {
            var last: OTAStatus?
            for await notification in subscription.notifications { last = OTAStatus(notification.value) ?? last }
            return last
        }

        // A chunk is its 4-octet offset and as much of the image as one Write Request carries
        // (ATT_MTU − 3 octets of value), within the 512 octets an attribute value may have (Core
        // Vol 3 Part F §3.2.9).
        let mtu = await peripheral.link?.connection.mtu ?? 23
        let chunkSize = max(1, min(mtu - 3, 512) - 4)
        let write = { @Sendable (value: [UInt8], characteristic: BluetoothUUID) in
            peripheral.writeOperation(value, to: characteristic, in: OTAProfile.service, requirements: .authorization, timeout: .seconds(10), retries: 1)
        }
        let begin = await peripheral.submit(write(OTAProfile.beginCommand(length: image.count, crc: crc), OTAProfile.status))
        var chunks: [RemoteQueuedOperation<Void>] = []
        for offset in stride(from: 0, to: image.count, by: chunkSize) {
            let end = min(offset + chunkSize, image.count)
            chunks.append(await peripheral.submit(write(OTAProfile.chunk(offset: offset, image[offset..<end]), OTAProfile.data)))
        }
        let finish = await peripheral.submit(write(OTAProfile.finishCommand, OTAProfile.status))
        let final = await peripheral.submit(peripheral.readOperation(OTAProfile.status, in: OTAProfile.service, timeout: .seconds(10)))
        let unsubscribe = await peripheral.submit(peripheral.unsubscribeOperation(subscription))
        let disconnect = await peripheral.submit(peripheral.disconnectOperation())
        say("queued \(chunks.count) chunks of up to \(chunkSize) bytes (ATT_MTU \(mtu))")

        try await begin.value
        for chunk in chunks { try await chunk.value }
        try await finish.value
        guard let after = OTAStatus(try await final.value) else { throw OTAFailure("the status characteristic reads no OTA status") }
        try await unsubscribe.value
        try await disconnect.value
        let notified = await progress.value
        let elapsed = ContinuousClock.now - started
        // The reporter prints what it has already taken (this link's end, say), then stops, so
        // nothing it prints can come after the summary below.
        reporter.cancel()
        await reporter.value

        say("status: \(after)")
        if let notified { say("last notified: \(notified)") }
        guard after.state == .verified, after.received == image.count, after.expected == image.count, after.crc == crc else {
            throw OTAFailure("the peripheral does not have the image: \(after), sent \(image.count) bytes, CRC-32 \(hex(crc, width: 8))")
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let links = await peripheral.connectionCount
        say("verified \(image.count) bytes, CRC-32 \(hex(crc, width: 8)), in \(String(format: "%.2f", seconds)) s over \(links) link\(links == 1 ? "" : "s")")
    }
}

/// Writes the access token once per link: the application's authorization (Bluewire's
/// `BluetoothHost` has no pairing yet; an authorizer that pairs would plug in here).
final class TokenAuthorizer: OperationAuthorizer {
    /// Weakly: the peripheral's queue holds this authorizer (through its decorator), so a strong
    /// reference would be a cycle that keeps the peripheral, its queue and its worker alive for ever.
    weak let peripheral: RemotePeripheral?
    let token: String
    private let authorizedLink = Mutex<Int?>(nil)

    init(peripheral: RemotePeripheral, token: String) {
        self.peripheral = peripheral
        self.token = token
    }

    func authorize(for requirements: OperationRequirements) async throws(OperationError) {
        guard let link = peripheral?.link else { throw .notConnected }
        if authorizedLink.withLock({ $0 == link.number }) { return }
        // On the link's own GATT client: the peripheral's queue is busy running the operation.
        // A link lost here is reported as such (auto-connect resumes); anything else as a failure.
        do throws(RemotePeripheralError) {
            let status = try await link.characteristic(OTAProfile.status, in: OTAProfile.service)
            let command = OTAProfile.authorizeCommand(token: token)
            try await link.withGATT { gatt throws(GATTError) in try await gatt.write(command, to: status) }
        } catch {
            throw OperationError(error)
        }
        authorizedLink.withLock { $0 = link.number }
        say("authorized (link \(link.number))")
    }
}

struct OTAFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
