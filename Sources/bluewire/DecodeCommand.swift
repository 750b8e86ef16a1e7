import ArgumentParser
import BluewireAnalysis
import BluewireSnoop
import BluewireTransport
import Glibc

/// `bluewire decode FILE|- [--json] [--summary] [-v] [--time ...] [filters]`: a btmon-like line per record
/// (or a field-per-line tree), JSON lines, or the per-kind counts of the whole capture.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode a btsnoop or pcapng capture: one line per packet, JSON lines, or a summary of counts.",
        discussion: """
            The format is recognised from the file's first bytes, not its name; `-` reads standard input. \
            In Linux monitor captures (btsnoop 2001) every line carries its controller index ([hci0]). \
            Filters combine (all must match); records that do not match are still decoded, so L2CAP \
            reassembly stays right. A file that ends inside a record prints every complete record (with \
            --summary: the counts of every complete record and where and why the file ends), then the \
            error on stderr, and exits with status 1.
            """
    )

    enum TimeOption: String, ExpressibleByArgument, CaseIterable {
        case absolute, relative, delta
    }

    enum KindOption: String, ExpressibleByArgument, CaseIterable {
        case command, event, acl, sco, iso, note

        var kind: String {
            switch self {
            case .command: "HCI Command"
            case .event: "HCI Event"
            case .acl: "ACL"
            case .sco: "SCO"
            case .iso: "ISO"
            case .note: "Note"
            }
        }
    }

    @Argument(help: "The capture file (btsnoop 1001/1002/2001 or pcapng), or - for standard input.")
    var file: String

    @Flag(help: "Print one JSON object per record instead of text.")
    var json = false

    @Flag(help: "Print only the counts per packet kind: a table, or one JSON object with --json.")
    var summary = false

    @Flag(name: .shortAndLong, help: "Print every decoded field on its own line under the record's line.")
    var verbose = false

    @Option(help: "Time column: relative (seconds since the first record), delta (since the previous one) or absolute (UTC).")
    var time: TimeOption = .relative

    @Option(help: "Only records on this connection handle (ACL handle or an HCI parameter), e.g. 0x0040.")
    var handle: String?

    @Option(help: "Only ACL records carrying an L2CAP PDU on this channel, e.g. 0x0004 for ATT.")
    var cid: String?

    @Option(help: "Only records of this kind: command, event, acl, sco, iso, note.")
    var kind: KindOption?

    @Option(help: "Only HCI commands with this opcode and the Command Complete/Status events answering them, e.g. 0x0c03.")
    var opcode: String?

    func validate() throws {
        for (name, value) in [("--handle", handle), ("--cid", cid), ("--opcode", opcode)] {
            if let value, DecodeCommand.number(value) == nil {
                throw ValidationError("\(name) takes a number such as 0x0040 or 64, not '\(value)'")
            }
        }
    }

    /// A decimal or 0x-prefixed hexadecimal number.
    static func number(_ text: String) -> Int? {
        if text.hasPrefix("0x") || text.hasPrefix("0X") { return Int(text.dropFirst(2), radix: 16) }
        return Int(text)
    }

    func run() throws {
        // `bluewire decode FILE | head` must end quietly, not die of SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let output = DecodeOutput()
        defer { output.flush() }
        let reader: CaptureFileReader
        do {
            reader = try CaptureFileReader(path: file == "-" ? "/dev/stdin" : file)
        } catch {
            DecodeOutput.fail(error.description)
        }
        if summary {
            var counts = CaptureSummary()
            var failure: CaptureFileError?
            do {
                while let record = try reader.next() { counts.add(record) }
            } catch {
                failure = error
            }
            var truncated: CaptureError?
            if case .capture(_, let error)? = failure, error.isTruncation, reader.format != nil { truncated = error }
            if failure == nil || truncated != nil {
                output.write(json ? counts.json(truncated: truncated) + "\n" : counts.table(truncated: truncated))
            }
            if let failure {
                output.flush()
                DecodeOutput.fail(failure.description)
            }
            return
        }
        var describer = PacketDescriber()
        describer.timeFormat = time == .absolute ? .absolute : time == .delta ? .delta : .relative
        let filter = DecodeFilter(handle: handle.flatMap(DecodeCommand.number), cid: cid.flatMap(DecodeCommand.number),
                                  kind: kind?.kind, opcode: opcode.flatMap(DecodeCommand.number))
        do {
            while let record = try reader.next() {
                if describer.format == nil { describer.format = reader.format }
                let d = describer.description(of: record)
                guard filter.matches(d) else { continue }
                if json {
                    output.writeJSONLine(d)
                } else {
                    output.write(verbose ? d.tree : d.line)
                    output.write("\n")
                }
            }
        } catch {
            output.flush()
            DecodeOutput.fail(error.description)
        }
    }
}

/// The `decode` filters, checked against a record's decoded fields.
struct DecodeFilter {
    var handle: Int?
    var cid: Int?
    var kind: String?
    var opcode: Int?

    func matches(_ d: PacketDescription) -> Bool {
        if let kind, d.kind != kind { return false }
        if let handle, !has(d, ["acl_handle", "handle"], handle) { return false }
        if let cid, !has(d, ["cid"], cid) { return false }
        if let opcode, !has(d, ["opcode", "command_opcode"], opcode) { return false }
        return true
    }

    func has(_ d: PacketDescription, _ names: [String], _ number: Int) -> Bool {
        d.fields.contains { field in
            guard names.contains(field.name), case .string(let text) = field.value else { return false }
            return DecodeCommand.number(text) == number
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

    /// The record's JSON object and a newline, built in the buffer itself.
    func writeJSONLine(_ description: PacketDescription) {
        description.appendJSON(to: &buffer)
        buffer.append(UInt8(ascii: "\n"))
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
            if result < 0 && errno == EPIPE { ProcessExit.exit(0) }
            guard result > 0 else { break }
            written += result
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Prints `message` as one line on stderr and exits with status 1.
    static func fail(_ message: String) -> Never {
        let line = Array(("bluewire decode: " + message + "\n").utf8)
        line.withUnsafeBytes { _ = Glibc.write(2, $0.baseAddress, $0.count) }
        ProcessExit.exit(1)
    }
}
