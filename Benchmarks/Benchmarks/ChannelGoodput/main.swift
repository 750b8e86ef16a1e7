import BluewireCore
import BluewireTesting
import Foundation

// Goodput in virtual time on the virtual link with radio timing (LE 2M, 251-octet PDUs both ways):
// an LE credit based channel against GATT notifications between two host engines, and both against
// the physical limit of the link's timing model (`LinkPayloadLimit`). Virtual time makes every figure
// deterministic: the same on every run and machine.
//   ChannelGoodput [--interval UNITS]...   (connection interval in 1.25 ms units; default 6, 24, 40)
let arguments = Array(CommandLine.arguments.dropFirst())
var intervals: [UInt16] = []
var index = 0
while index < arguments.count {
    if arguments[index] == "--interval", index + 1 < arguments.count, let value = UInt16(arguments[index + 1]) {
        intervals.append(value)
        index += 2
    } else {
        print("usage: ChannelGoodput [--interval UNITS]...")
        exit(2)
    }
}
if intervals.isEmpty { intervals = [6, 24, 40] }

func format(_ value: Double, _ decimals: Int = 1) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    return "\(rounded)"
}

for interval in intervals {
    let limit = LinkPayloadLimit(interval: interval)
    print("interval \(format(Double(interval) * 1.25, 2)) ms: exchange \(limit.exchangeMicroseconds) µs, \(limit.exchangesPerEvent) per event; "
        + "limit \(format(limit.kilobitsPerSecond)) kbit/s of L2CAP payload (back to back \(format(limit.backToBackKilobitsPerSecond)))")
    let runs: [(String, () throws -> GoodputMeasurement)] = [
        ("CoC MTU 247, MPS 247, SDU 245, 64 credits", { try LinkGoodput.channel(interval: interval, mtu: 247, credits: 64, sduLength: 245) }),
        ("CoC MTU 247, MPS 247, SDU 245, 16 credits", { try LinkGoodput.channel(interval: interval, mtu: 247, credits: 16, sduLength: 245) }),
        ("CoC MTU 512, MPS 247, SDU 492, 64 credits", { try LinkGoodput.channel(interval: interval, mtu: 512, credits: 64, sduLength: 492) }),
        ("CoC MTU 2000, MPS 247, SDU 1974, 64 credits", { try LinkGoodput.channel(interval: interval, mtu: 2_000, credits: 64, sduLength: 1_974) }),
        ("GATT notifications, ATT_MTU 247 (244 octets)", { try LinkGoodput.notifications(interval: interval, mtu: 247) }),
        ("GATT notifications, ATT_MTU 512 (509 octets)", { try LinkGoodput.notifications(interval: interval, mtu: 512) }),
    ]
    for (name, run) in runs {
        do {
            let measured = try run()
            print("  \(name): \(format(measured.kilobitsPerSecond)) kbit/s, \(format(measured.kilobitsPerSecond / limit.kilobitsPerSecond * 100, 2)) % of the limit (\(measured.units) units, \(measured.octets) octets in \(measured.span.microseconds / 1_000) ms)")
        } catch {
            print("  \(name): failed: \(error)")
        }
    }
}
