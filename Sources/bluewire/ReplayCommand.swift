import ArgumentParser

/// `bluewire replay`: not built yet; its issue replaces this file.
struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "replay", abstract: "(not built yet)")
    func run() throws { throw ValidationError("bluewire replay is not built yet") }
}
