import Benchmark
import BluewireCore
import BluewireTransport
import Foundation
import Glibc

/// `HCITransport.send` on a descriptor transport (here TCP on loopback, the same loop as the UART,
/// Unix socket and HCI user channel transports), to a peer that reads and discards everything: the
/// cost of handing one packet to the kernel from an async caller, as the host's writer task does for
/// every command and ACL packet. One scaled iteration is one `send` (a sample is a thousand).
let benchmarks: @Sendable () -> Void = {
    for length in [27, 251] {
        Benchmark(
            "TCP transport: send, one \(length)-byte ACL payload at a time",
            configuration: .init(
                metrics: [.wallClock, .mallocCountTotal, .instructions], timeUnits: .nanoseconds, warmupIterations: 1,
                scalingFactor: .kilo, maxDuration: .seconds(3), maxIterations: 200)
        ) { benchmark in
            await sendThroughTCP(benchmark, length: length)
        }
    }
}

func sendThroughTCP(_ benchmark: Benchmark, length: Int) async {
    do {
        let server = try DiscardServer()
        let transport = try await TransportSpec(parsing: "tcp:127.0.0.1:\(server.port)").open()
        let packet = HCIPacket(
            type: .acl, payload: [0x40, 0x00, UInt8(length & 0xFF), UInt8(length >> 8)] + [UInt8](repeating: 0xA5, count: length))
        for _ in 0..<256 { try await transport.send(packet) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            try await transport.send(packet)
        }
        benchmark.stopMeasurement()
        await transport.close()
    } catch {
        benchmark.error("\(error)")
    }
}

/// A TCP listener on 127.0.0.1 that accepts one client and reads until it hangs up.
final class DiscardServer: Sendable {
    let port: UInt16

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                bind(listener, sa, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, sa, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread {
            let client = accept(listener, nil, nil)
            close(listener)
            guard client >= 0 else { return }
            var buffer = [UInt8](repeating: 0, count: 256 * 1024)
            while buffer.withUnsafeMutableBytes({ read(client, $0.baseAddress, $0.count) }) > 0 {}
            close(client)
        }
    }
}
