import Glibc
import Testing

@testable import BluewireTransport

@Suite("Transport spec parsing")
struct TransportSpecTests {
    @Test(arguments: [
        ("hci0", TransportSpec.hciUserChannel(device: 0)),
        ("hci12", .hciUserChannel(device: 12)),
        ("tcp:127.0.0.1:9000", .tcp(host: "127.0.0.1", port: 9000)),
        ("tcp:localhost:1", .tcp(host: "localhost", port: 1)),
        ("tcp:[::1]:6402", .tcp(host: "::1", port: 6402)),
        ("unix:/tmp/ctrl.sock", .unix(path: "/tmp/ctrl.sock")),
        ("serial:/dev/ttyUSB0", .serial(path: "/dev/ttyUSB0", baudRate: 115_200, hardwareFlowControl: false)),
        ("serial:/dev/ttyACM0:1000000", .serial(path: "/dev/ttyACM0", baudRate: 1_000_000, hardwareFlowControl: false)),
        ("serial:/dev/ttyAMA0:921600:rtscts", .serial(path: "/dev/ttyAMA0", baudRate: 921_600, hardwareFlowControl: true)),
        ("replay:session.btsnoop", .replay(path: "session.btsnoop")),
    ])
    func validSpellingsParse(text: String, spec: TransportSpec) throws {
        #expect(try TransportSpec(parsing: text) == spec)
        #expect(try TransportSpec(parsing: spec.description) == spec, "description must round-trip")
    }

    @Test(arguments: ["", "hci", "hcix", "bt0", "tcp:127.0.0.1", "tcp::9000", "tcp:host:0", "tcp:host:70000",
                      "unix:", "serial:", "serial:/dev/ttyS0:12345", "replay:", "usb:0"])
    func invalidSpellingsAreTypedErrors(text: String) {
        #expect {
            _ = try TransportSpec(parsing: text)
        } throws: { error in
            if case .invalidSpec = error as? TransportError { return true }
            return false
        }
    }

    @Test func replayIsParsedButNotOpenedHere() async {
        await #expect(throws: TransportError.unsupported("replay:x.btsnoop is opened by BluewireTesting's replay transport")) {
            _ = try await TransportSpec.replay(path: "x.btsnoop").open()
        }
    }

    /// The only test that touches BLUEWIRE_TRANSPORT, so running in parallel with others is safe.
    @Test func environmentGivesTheDefaultAndAnExplicitOptionWins() throws {
        setenv(TransportSpec.environmentVariable, "unix:/run/ctrl.sock", 1)
        defer { unsetenv(TransportSpec.environmentVariable) }
        #expect(try TransportSpec.resolve(nil) == .unix(path: "/run/ctrl.sock"))
        #expect(try TransportSpec.resolve("tcp:h:5") == .tcp(host: "h", port: 5))
        unsetenv(TransportSpec.environmentVariable)
        #expect(throws: TransportError.self) { _ = try TransportSpec.resolve(nil) }
    }
}
