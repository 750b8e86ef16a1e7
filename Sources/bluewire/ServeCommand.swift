import ArgumentParser

/// `bluewire serve`: not built yet; its issue replaces this file.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "(not built yet)")
    func run() throws { throw ValidationError("bluewire serve is not built yet") }
}
