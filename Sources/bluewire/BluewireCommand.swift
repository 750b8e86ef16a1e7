import ArgumentParser

/// `bluewire`: the command-line front end of the Bluewire BLE host stack (see README.md).
@main
struct BluewireCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bluewire",
        abstract: "A Bluetooth Low Energy host stack that speaks HCI directly: decode, analyze, scan, GATT, serve, replay, throughput, pair, bonds, l2cap.",
        version: BluewireCommand.version,
        subcommands: [
            DecodeCommand.self,
            AnalyzeCommand.self,
            ScanCommand.self,
            ScanTestAdvertiserCommand.self,
            GATTCommand.self,
            ServeCommand.self,
            ReplayCommand.self,
            ThroughputCommand.self,
            PairCommand.self,
            BondsCommand.self,
            L2CAPCommand.self,
        ]
    )

    /// What `bluewire --version` prints.
    static let version = "bluewire 0.1.0"
}
