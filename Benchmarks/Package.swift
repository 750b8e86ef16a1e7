// swift-tools-version: 6.1
import PackageDescription
import Foundation

// A path dependency is named after its folder: find the library checkout's folder name.
let bluewire = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// Benchmarks live in their own package so the library's build and test never pull in the
// benchmark framework. Run: `cd Benchmarks && swift package benchmark` (see README.md).
func benchmarkTarget(_ name: String, _ products: [String]) -> Target {
    .executableTarget(
        name: name,
        dependencies: [.product(name: "Benchmark", package: "benchmark")]
            + products.map { .product(name: $0, package: bluewire) },
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
            "Bluewire", "BluewireCore", "BluewireHCI", "BluewireL2CAP", "BluewireATT", "BluewireGATT", "BluewireTransport",
        ]),
        benchmarkTarget("VirtualLinkGoodput", ["Bluewire", "BluewireTesting", "BluewireCore", "BluewireGATT"]),
        .executableTarget(name: "GoodputProfile", dependencies: [.product(name: "Bluewire", package: bluewire), .product(name: "BluewireTesting", package: bluewire), .product(name: "BluewireCore", package: bluewire), .product(name: "BluewireGATT", package: bluewire)], path: "Profile/GoodputProfile"),
    ]
)
