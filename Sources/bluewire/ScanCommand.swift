import ArgumentParser

/// `bluewire scan`: not built yet; its issue replaces this file.
struct ScanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "scan", abstract: "(not built yet)")
    func run() throws { throw ValidationError("bluewire scan is not built yet") }
}
