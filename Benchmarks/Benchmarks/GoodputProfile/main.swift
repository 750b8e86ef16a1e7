import Bluewire
import BluewireCore
import BluewireTesting
import VirtualLinkScene

// Streams notifications between two hosts on the virtual link outside the benchmark harness, so
// that perf or heaptrack can run it directly:
//   GoodputProfile [COUNT] [--controller-defaults]
// COUNT notifications (default 100,000) after 1,000 of warm-up; prints octets, time and Mbit/s.
let arguments = CommandLine.arguments.dropFirst()
let count = arguments.compactMap { Int($0) }.first ?? 100_000
let configuration = arguments.contains("--controller-defaults") ? nil : NotificationStream.wholePDUConfiguration
let stream = try await NotificationStream(configuration: configuration)
_ = try await stream.move(1_000)
let start = ContinuousClock.now
let octets = try await stream.move(count)
let (seconds, attoseconds) = (ContinuousClock.now - start).components
let elapsed = Double(seconds) + Double(attoseconds) / 1e18
print("\(count) notifications, \(octets) octets in \(elapsed) s: \(Double(octets) * 8 / elapsed / 1e6) Mbit/s")
