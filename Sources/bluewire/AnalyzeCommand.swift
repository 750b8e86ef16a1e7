import ArgumentParser

/// `bluewire analyze`: not built yet; its issue replaces this file.
struct AnalyzeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "analyze", abstract: "(not built yet)")
    func run() throws { throw ValidationError("bluewire analyze is not built yet") }
}
