import Bluewire
import BluewireTransport
import Foundation
import PeerTestSupport
import Testing

/// `scripts/controller.sh`, the README's one-command controllers for the examples: it starts real
/// bumble controllers on one link, each on its own TCP port with its own random static address, and a
/// Bluewire host comes up on each.
@Suite("scripts/controller.sh", .enabled(if: FileManager.default.isExecutableFile(
    atPath: BumblePeer.repositoryRoot.appendingPathComponent(".venv/bin/python").path)))
struct ControllerScriptTests {
    struct Ready: Decodable {
        struct Controller: Decodable {
            var transport: String
            var address: String
        }
        var controllers: [Controller]
    }

    /// The first line the script prints on stdout, or nil if it ends first.
    static func firstLine(of handle: FileHandle) async -> String? {
        await withCheckedContinuation { continuation in
            // Blocking reads belong on a thread of their own, not on the cooperative pool.
            Thread.detachNewThread {
                var pending = Data()
                while true {
                    let data = handle.availableData
                    if data.isEmpty { return continuation.resume(returning: nil) }
                    pending.append(data)
                    if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        return continuation.resume(returning: String(decoding: pending[..<newline], as: UTF8.self))
                    }
                }
            }
        }
    }

    @Test("two controllers on free ports, distinct addresses, and a host starts on each")
    func twoControllers() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        // Port 0: bumble_link.py picks free ports and reports them in READY.
        process.arguments = [BumblePeer.repositoryRoot.appendingPathComponent("scripts/controller.sh").path, "0", "0"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { process.interrupt() }
            process.waitUntilExit()
        }
        let pid = process.processIdentifier
        let watchdog = Task {
            try await Task.sleep(for: .seconds(60))
            kill(pid, SIGTERM)
        }
        let line = await Self.firstLine(of: output.fileHandleForReading)
        watchdog.cancel()
        let text = try #require(line, "controller.sh ended without a READY line")
        #expect(text.hasPrefix("READY "))
        let ready = try JSONDecoder().decode(Ready.self, from: Data(text.dropFirst(6).utf8))
        #expect(ready.controllers.count == 2)
        #expect(Set(ready.controllers.map(\.address)).count == 2, "each controller has its own address")
        for controller in ready.controllers {
            #expect(controller.transport.hasPrefix("tcp:127.0.0.1:") && !controller.transport.hasSuffix(":0"))
            let host = BluetoothHost(transport: try await TransportSpec(parsing: controller.transport).open())
            let info = try await host.start()
            #expect(info.leACLDataPacketLength > 0)
            await host.close()
        }
        process.interrupt()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit || process.terminationStatus == SIGINT)
    }
}
