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

    /// `count` consecutive loopback ports that are free now (bound, then released), from a random
    /// start far from the README's 9001.
    static func freePortRange(_ count: Int) throws -> Int {
        for _ in 0..<50 {
            let base = Int.random(in: 20_000...40_000)
            let listeners = (0..<count).compactMap { try? LoopbackListener(port: UInt16(base + $0)) }
            if listeners.count == count { return base }
        }
        throw ProcessRunner.Failure(description: "no \(count) consecutive free ports")
    }

    /// Runs controller.sh with `arguments` until its READY line; returns it and the process.
    static func start(_ arguments: [String], environment: [String: String] = [:]) async throws -> (Ready, Process) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [BumblePeer.repositoryRoot.appendingPathComponent("scripts/controller.sh").path] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let pid = process.processIdentifier
        let watchdog = Task {
            try await Task.sleep(for: .seconds(60))
            kill(pid, SIGTERM)
        }
        let line = await Self.firstLine(of: output.fileHandleForReading)
        watchdog.cancel()
        guard let text = line, text.hasPrefix("READY ") else {
            if process.isRunning { process.interrupt() }
            process.waitUntilExit()
            throw ProcessRunner.Failure(description: "controller.sh \(arguments) ended without a READY line")
        }
        return (try JSONDecoder().decode(Ready.self, from: Data(text.dropFirst(6).utf8)), process)
    }

    @Test("the named sets start README's controllers in one call: examples four, throughput two with 251-octet buffers",
          arguments: [("examples", 4, 27), ("throughput", 2, 251)])
    func namedSets(_ set: String, _ count: Int, _ aclLength: Int) async throws {
        let base = try Self.freePortRange(count)
        let (ready, process) = try await Self.start([set], environment: ["BLUEWIRE_CONTROLLER_BASE_PORT": "\(base)"])
        defer {
            if process.isRunning { process.interrupt() }
            process.waitUntilExit()
        }
        #expect(ready.controllers.map(\.transport) == (0..<count).map { "tcp:127.0.0.1:\(base + $0)" })
        let host = BluetoothHost(transport: try await TransportSpec(parsing: ready.controllers[count - 1].transport).open())
        let info = try await host.start()
        #expect(Int(info.leACLDataPacketLength) == aclLength)
        await host.release()
    }

    @Test("a port already in use ends controller.sh with one line on stderr, no traceback")
    func portInUse() async throws {
        let listener = try LoopbackListener(port: 0)
        let result = try await ProcessRunner.run(URL(fileURLWithPath: "/bin/bash"), [
            BumblePeer.repositoryRoot.appendingPathComponent("scripts/controller.sh").path, "\(listener.port)",
        ], timeout: .seconds(60))
        #expect(result.status == 1)
        #expect(result.standardError.split(separator: "\n").count == 1, "stderr: \(result.standardError)")
        #expect(result.standardError.contains("port \(listener.port) on 127.0.0.1 is in use"), "stderr: \(result.standardError)")
        #expect(!result.standardError.contains("Traceback"))
    }

    /// Two hosts on one controller would mix their HCI streams into one controller: bumble_link.py
    /// closes the second connection, and the second host's bring-up fails saying so.
    @Test("a second host on a controller already in use is refused with a clear error")
    func secondHostIsRefused() async throws {
        let (ready, process) = try await Self.start(["0"])
        defer {
            if process.isRunning { process.interrupt() }
            process.waitUntilExit()
        }
        let transport = ready.controllers[0].transport
        let first = BluetoothHost(transport: try await TransportSpec(parsing: transport).open())
        try await first.start()
        let second = try await ProcessRunner.run(try ProcessRunner.bluewire, ["scan", "--duration", "1", "--transport", transport],
                                                 timeout: .seconds(30))
        #expect(second.status == 1)
        #expect(second.standardError.contains("closed the connection before answering") && second.standardError.contains("another program"),
                "stderr: \(second.standardError)")
        // The first host is undisturbed.
        _ = try await first.send(.readLocalVersionInformation)
        await first.release()
    }
}
