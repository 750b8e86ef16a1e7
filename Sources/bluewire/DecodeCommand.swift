import ArgumentParser

/// `bluewire decode`: not built yet; its issue replaces this file.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "decode", abstract: "(not built yet)")
    func run() throws { throw ValidationError("bluewire decode is not built yet") }
}
