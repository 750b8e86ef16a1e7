import ArgumentParser

/// `bluewire throughput`: not built yet; its issue replaces this file.
struct ThroughputCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "throughput", abstract: "(not built yet)")
    func run() throws { throw ValidationError("bluewire throughput is not built yet") }
}
