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

    @Test("two controllers on free ports, distinct addresses, and a host starts on each")
    func twoControllers() async throws {
        // Port 0: bumble_link.py picks free ports and reports them in READY.
        let (ready, process) = try await Self.start(["0", "0"])
        defer { process.interruptAndStop() }
        #expect(ready.controllers.count == 2)
        #expect(Set(ready.controllers.map(\.address)).count == 2, "each controller has its own address")
        for controller in ready.controllers {
            #expect(controller.transport.hasPrefix("tcp:127.0.0.1:") && !controller.transport.hasSuffix(":0"))
            let host = BluetoothHost(transport: try await TransportSpec(parsing: controller.transport).open())
            let info = try await host.start()
            #expect(info.leACLDataPacketLength > 0)
            await host.close()
        }
        process.send(signal: SIGINT)
        await process.exitStatus(within: .seconds(30))
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

    /// Runs controller.sh with `arguments` until its READY line; returns it and the running script.
    static func start(_ arguments: [String], environment: [String: String] = [:]) async throws -> (Ready, ChildProcess) {
        let process = try ChildProcess(
            URL(fileURLWithPath: "/bin/bash"), [BumblePeer.repositoryRoot.appendingPathComponent("scripts/controller.sh").path] + arguments,
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        let pid = process.processIdentifier
        let watchdog = Task {
            try await Task.sleep(for: .seconds(60))
            kill(pid, SIGTERM)
        }
        var lines = process.lines.makeAsyncIterator()
        let line = await lines.next()
        watchdog.cancel()
        guard let text = line, text.hasPrefix("READY ") else {
            let standardError = process.standardError
            process.interruptAndStop()
            throw ProcessRunner.Failure(description: "controller.sh \(arguments) ended without a READY line: \(standardError)")
        }
        return (try JSONDecoder().decode(Ready.self, from: Data(text.dropFirst(6).utf8)), process)
    }

    @Test("the named sets start README's controllers in one call: examples four, throughput two with 251-octet buffers",
          arguments: [("examples", 4, 27), ("throughput", 2, 251)])
    func namedSets(_ set: String, _ count: Int, _ aclLength: Int) async throws {
        let base = try Self.freePortRange(count)
        let (ready, process) = try await Self.start([set], environment: ["BLUEWIRE_CONTROLLER_BASE_PORT": "\(base)"])
        defer { process.interruptAndStop() }
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
        defer { process.interruptAndStop() }
        let transport = ready.controllers[0].transport
        let first = BluetoothHost(transport: try await TransportSpec(parsing: transport).open())
        try await first.start()
        let second = try await ProcessRunner.run(try ProcessRunner.bluewire, ["scan", "--duration", "1", "--transport", transport],
                                                 timeout: .seconds(30))
        #expect(second.status == 1)
        #expect(second.standardError.contains("closed its stream") && second.standardError.contains("another program"),
                "stderr: \(second.standardError)")
        // The first host is undisturbed.
        _ = try await first.send(.readLocalVersionInformation)
        await first.release()
    }
}

extension ChildProcess {
    /// Stops controller.sh as a user does, with SIGINT (Ctrl-C), on which it stops its controllers;
    /// SIGTERM and SIGKILL only if it is still running after `grace`.
    func interruptAndStop(grace: Duration = .seconds(10)) {
        if isRunning {
            send(signal: SIGINT)
            let deadline = ContinuousClock.now + grace
            while isRunning, ContinuousClock.now < deadline { usleep(20_000) }
        }
        stop()
        removeErrorLog()
    }
}
