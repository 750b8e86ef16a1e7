import ArgumentParser

/// `bluewire gatt`: not built yet; its issue replaces this file.
struct GATTCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "gatt", abstract: "(not built yet)")
    func run() throws { throw ValidationError("bluewire gatt is not built yet") }
}
