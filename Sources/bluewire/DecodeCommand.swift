import ArgumentParser
import BluewireAnalysis
import BluewireSnoop
import BluewireTransport
import Glibc

/// `bluewire decode FILE [--json] [--summary]`: a btmon-like line per record, JSON lines, or the
/// per-kind counts of the whole capture as one JSON object.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode a btsnoop or pcapng capture: one line per packet, JSON lines, or a summary of counts.",
        discussion: """
            The format is recognised from the file's first bytes, not its name. A file that ends inside a \
            record prints every complete record, then the error on stderr, and exits with status 1.
            """
    )

    @Argument(help: "The capture file (btsnoop 1001/1002/2001 or pcapng).")
    var file: String

    @Flag(help: "Print one JSON object per record instead of text.")
    var json = false

    @Flag(help: "Print only the counts per packet kind, as one JSON object.")
    var summary = false

    func run() throws {
        // `bluewire decode FILE | head` must end quietly, not die of SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let output = DecodeOutput()
        defer { output.flush() }
        do {
            let reader = try CaptureFileReader(path: file)
            if summary {
                var counts = CaptureSummary()
                while let record = try reader.next() { counts.add(record) }
                output.write(counts.json)
                output.write("\n")
            } else {
                var describer = PacketDescriber()
                while let record = try reader.next() {
                    output.write(json ? describer.jsonLine(record) : describer.describe(record))
                    output.write("\n")
                }
            }
        } catch {
            output.flush()
            DecodeOutput.fail(error.description)
        }
    }
}

/// Buffered standard output: decoding prints hundreds of thousands of lines.
final class DecodeOutput {
    private var buffer: [UInt8] = []

    init() { buffer.reserveCapacity(1 << 16) }

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        var written = 0
        while written < buffer.count {
            let result = buffer.withUnsafeBytes { bytes -> Int in
                guard let base = bytes.baseAddress else { return 0 }
                return Glibc.write(1, base + written, bytes.count - written)
            }
            if result < 0 && errno == EINTR { continue }
            // A closed pipe (`| head`) ends the output quietly.
            if result < 0 && errno == EPIPE { exit(0) }
            guard result > 0 else { break }
            written += result
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Prints `message` as one line on stderr and exits with status 1.
    static func fail(_ message: String) -> Never {
        let line = Array(("bluewire decode: " + message + "\n").utf8)
        line.withUnsafeBytes { _ = Glibc.write(2, $0.baseAddress, $0.count) }
        exit(1)
    }
}
