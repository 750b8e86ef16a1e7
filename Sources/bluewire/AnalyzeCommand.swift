import ArgumentParser
import BluewireAnalysis
import BluewireGATT
import BluewireSnoop
import BluewireTransport
import Glibc

/// `bluewire analyze FILE [--export-db DIR] [--json]`: per-connection reconstruction of a capture.
struct AnalyzeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Reconstruct each connection of a capture: peer, roles, MTU, link changes, GATT table, reads, writes, notifications.",
        discussion: """
            The GATT table of each server is rebuilt from the discovery responses in the capture; per \
            characteristic value and descriptor the report counts reads (R), writes (W), notifications (N), \
            indications (I) and errors (E), with the last value. --export-db writes, for every device whose \
            services were discovered, a database file `bluewire serve --db` accepts (<address>.json). \
            A file that ends inside a record is analyzed up to that record; the error then goes to stderr \
            and the exit status is 1.
            """
    )

    @Argument(help: "The capture file (btsnoop 1001/1002/2001 or pcapng).")
    var file: String

    @Option(name: .customLong("export-db"), help: "Write one GATT database file per device into this directory.")
    var exportDirectory: String?

    @Flag(help: "Print the analysis as one JSON object.")
    var json = false

    func run() throws {
        var analyzer = CaptureAnalyzer()
        var readError: String?
        do {
            let reader = try CaptureFileReader(path: file)
            while let record = try reader.next() { analyzer.add(record) }
        } catch {
            switch error {
            case .capture:
                // Everything before the broken record is still worth reporting.
                readError = error.description
            default:
                Self.fail(error.description)
            }
        }
        let analysis = analyzer.analysis
        let output = DecodeOutput()
        output.write(json ? analysis.json + "\n" : analysis.text)
        if let exportDirectory {
            let written = Self.export(analysis, to: exportDirectory)
            if !json {
                output.write("\nExported \(written.count) database file(s) to \(exportDirectory)\n")
                for name in written { output.write("  \(name)\n") }
            }
        }
        output.flush()
        if let readError { Self.fail(readError) }
    }

    /// Writes each device's database; returns the file names written.
    static func export(_ analysis: CaptureAnalysis, to directory: String) -> [String] {
        if mkdir(directory, 0o755) != 0 && errno != EEXIST {
            fail("cannot create \(directory): \(String(cString: strerror(errno)))")
        }
        var written: [String] = []
        for device in analysis.devices where !device.table.isEmpty {
            let database: GATTDatabase
            do {
                database = try device.database()
            } catch {
                warn("\(device.name): database not exported: \(error)")
                continue
            }
            let path = directory + "/" + device.databaseFileName
            writeFile(path, database.exportJSON())
            written.append(device.databaseFileName)
        }
        return written
    }

    static func writeFile(_ path: String, _ text: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { fail("cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { _ = close(fd) }
        let bytes = Array(text.utf8)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return Glibc.write(fd, base + done, buffer.count - done)
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { fail("cannot write \(path): \(String(cString: strerror(errno)))") }
            done += n
        }
    }

    static func warn(_ message: String) {
        let line = Array(("bluewire analyze: " + message + "\n").utf8)
        line.withUnsafeBytes { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }

    /// Prints `message` as one line on stderr and exits with status 1.
    static func fail(_ message: String) -> Never {
        warn(message)
        ProcessExit.exit(1)
    }
}
