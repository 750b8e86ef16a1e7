// swift-tools-version: 6.1
import PackageDescription
import Foundation

// A path dependency is named after its folder: find the library checkout's folder name.
let bluewire = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// Benchmarks live in their own package so the library's build and test never pull in the
// benchmark framework. Run: `cd Benchmarks && swift package benchmark` (see README.md).
func bluewireProducts(_ products: [String]) -> [Target.Dependency] {
    products.map { .product(name: $0, package: bluewire) }
}

func benchmarkTarget(_ name: String, _ products: [String], local: [String] = []) -> Target {
    .executableTarget(
        name: name,
        dependencies: [.product(name: "Benchmark", package: "benchmark")]
            + bluewireProducts(products) + local.map { .target(name: $0) },
        path: "Benchmarks/\(name)",
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
}

let package = Package(
    name: "BluewireBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        benchmarkTarget("CaptureDecode", ["BluewireCore", "BluewireHCI", "BluewireSnoop", "BluewireAnalysis"]),
        benchmarkTarget("AdvertisingReports", ["BluewireCore", "BluewireHCI", "BluewireSnoop"]),
        benchmarkTarget("NotificationPath", [
            "Bluewire", "BluewireCore", "BluewireHCI", "BluewireL2CAP", "BluewireATT", "BluewireGATT", "BluewireTransport", "BluewireHostEngine",
        ]),
        benchmarkTarget("TransportSend", ["BluewireCore", "BluewireTransport"]),
        benchmarkTarget("VirtualLinkGoodput", ["Bluewire", "BluewireTesting", "BluewireCore"], local: ["VirtualLinkScene"]),
        // Two hosts streaming notifications, shared by the goodput benchmark and its profiling driver.
        .target(name: "VirtualLinkScene", dependencies: bluewireProducts(["Bluewire", "BluewireTesting", "BluewireCore", "BluewireGATT"]),
                path: "Support/VirtualLinkScene"),
        // Channel vs notification goodput in virtual time on the radio-timed virtual link, against its physical limit.
        .executableTarget(name: "ChannelGoodput", dependencies: bluewireProducts(["BluewireTesting", "BluewireCore"]),
                          path: "Benchmarks/ChannelGoodput"),
        .executableTarget(name: "GoodputProfile", dependencies: ["VirtualLinkScene"] + bluewireProducts(["Bluewire", "BluewireTesting", "BluewireCore"]),
                          path: "Benchmarks/GoodputProfile"),
    ]
)
