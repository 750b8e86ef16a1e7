// swift-tools-version: 6.1
import PackageDescription

/// Layering (arrows point down only; see README.md):
/// bluewire (CLI) → Bluewire (Host) → HostEngine; GATT → ATT → Core; L2CAP → HCI → Core; Snoop → Core;
/// Transport does all I/O; Testing provides virtual and replay controllers.
/// HostEngine (the host as a sans-I/O state machine) → GATT, ATT, L2CAP, SMP, HCI, Core.
/// SMP (Security Manager: PDUs, crypto functions, pairing state machine) → Core; Crypto implements its
/// primitives on swift-crypto.
/// Core modules (Core, Snoop, HCI, L2CAP, ATT, GATT, Analysis, HostEngine, SMP) use no Foundation and no Glibc and
/// compile under Embedded Swift (scripts/check-embedded.sh).
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

/// scripts/sanitizers.sh builds with BLUEWIRE_SANITIZER_BUILD=1: the executable then links the Swift runtime
/// and Foundation as shared libraries, as the test bundle does. `-static-stdlib` links with
/// `--exclude-libs ALL`, which also hides the sanitizer runtime's malloc and free from the shared C
/// library: what glibc allocates itself (`getline` under `readLine()`) is freed through the sanitizer,
/// an "attempting free on address which was not malloc()-ed" abort, and LeakSanitizer cannot scan
/// what libstdc++ allocates for the runtime's caches. The code under test is the same either way.
let sanitizerBuild = Context.environment["BLUEWIRE_SANITIZER_BUILD"] == "1"

/// What a statically linked Foundation needs besides libFoundation.a (the static modules' autolink list).
let staticFoundationArchives = [
    "CoreFoundation", "_FoundationICU", "FoundationInternationalization", "FoundationEssentials",
    "_FoundationCShims", "_FoundationCollections", "swiftSynchronization",
].map { "-l" + $0 }

let package = Package(
    name: "Bluewire",
    products: [
        .library(name: "Bluewire", targets: ["Bluewire"]),
        .library(name: "BluewireCore", targets: ["BluewireCore"]),
        .library(name: "BluewireSnoop", targets: ["BluewireSnoop"]),
        .library(name: "BluewireHCI", targets: ["BluewireHCI"]),
        .library(name: "BluewireL2CAP", targets: ["BluewireL2CAP"]),
        .library(name: "BluewireATT", targets: ["BluewireATT"]),
        .library(name: "BluewireGATT", targets: ["BluewireGATT"]),
        .library(name: "BluewireAnalysis", targets: ["BluewireAnalysis"]),
        .library(name: "BluewireHostEngine", targets: ["BluewireHostEngine"]),
        .library(name: "BluewireSMP", targets: ["BluewireSMP"]),
        .library(name: "BluewireCrypto", targets: ["BluewireCrypto"]),
        .library(name: "BluewireTransport", targets: ["BluewireTransport"]),
        .library(name: "BluewireReplay", targets: ["BluewireReplay"]),
        .library(name: "BluewireTesting", targets: ["BluewireTesting"]),
        .executable(name: "bluewire", targets: ["bluewire"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "4.5.2"),
    ],
    targets: [
        // MARK: sans-I/O core (no Foundation, no Glibc, Embedded-Swift clean)
        .target(name: "BluewireCore", swiftSettings: strict),
        .target(name: "BluewireSnoop", dependencies: ["BluewireCore"], swiftSettings: strict),
        .target(name: "BluewireHCI", dependencies: ["BluewireCore"], swiftSettings: strict),
        .target(name: "BluewireL2CAP", dependencies: ["BluewireCore", "BluewireHCI"], swiftSettings: strict),
        .target(name: "BluewireATT", dependencies: ["BluewireCore"], swiftSettings: strict),
        .target(
            name: "BluewireGATT",
            dependencies: ["BluewireCore", "BluewireATT"],
            swiftSettings: strict
        ),
        .target(
            name: "BluewireAnalysis",
            dependencies: ["BluewireCore", "BluewireSnoop", "BluewireHCI", "BluewireL2CAP", "BluewireATT", "BluewireGATT", "BluewireSMP"],
            swiftSettings: strict
        ),
        .target(
            name: "BluewireHostEngine",
            dependencies: ["BluewireCore", "BluewireHCI", "BluewireL2CAP", "BluewireATT", "BluewireGATT", "BluewireSMP"],
            swiftSettings: strict
        ),
        // Security Manager (Core Vol 3 Part H): PDUs, crypto functions over a primitives protocol, pairing.
        .target(name: "BluewireSMP", dependencies: ["BluewireCore"], swiftSettings: strict),

        // MARK: I/O and host
        // The SMP crypto primitives on swift-crypto (AES block, AES-CMAC, P-256): not core, uses Foundation.
        .target(
            name: "BluewireCrypto",
            dependencies: [
                "BluewireSMP",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict
        ),
        .systemLibrary(
            name: "CBluetooth",
            pkgConfig: "bluez",
            providers: [.apt(["libbluetooth-dev"])]
        ),
        .target(
            name: "BluewireTransport",
            dependencies: ["BluewireCore", "BluewireSnoop", "CBluetooth"],
            swiftSettings: strict
        ),
        .target(
            name: "Bluewire",
            dependencies: [
                "BluewireCore", "BluewireHCI", "BluewireL2CAP", "BluewireATT", "BluewireGATT",
                "BluewireSnoop", "BluewireTransport", "BluewireHostEngine", "BluewireSMP", "BluewireCrypto",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // A capture replayed as the controller (`bluewire replay`, `--transport replay:FILE`) and the
        // virtual clock it paces the host with: what the CLI ships of the test machinery, and no more.
        .target(
            name: "BluewireReplay",
            dependencies: ["Bluewire", "BluewireCore", "BluewireSnoop", "BluewireTransport"],
            swiftSettings: strict
        ),
        .target(
            name: "BluewireTesting",
            dependencies: [
                "BluewireReplay", "BluewireCore", "BluewireHCI", "BluewireSnoop", "BluewireTransport", "BluewireHostEngine", "BluewireGATT",
                "BluewireL2CAP", "BluewireSMP", "BluewireCrypto",
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "bluewire",
            dependencies: [
                "Bluewire", "BluewireAnalysis", "BluewireReplay", "BluewireTransport", "BluewireSnoop", "BluewireCore", "BluewireGATT",
                "BluewireHCI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict,
            // The Swift runtime and Foundation (with ICU) linked into the executable, not loaded at start:
            // dynamically they cost ~14 ms of CPU and ~20 MB before `decode` reads a byte, most of a small
            // decode's time. Only this executable: a library target's flags would reach its users. The
            // modules were compiled against the shared Foundation, whose autolink entries name only
            // libFoundation: the static archives it needs besides are named here. lld, because gold
            // repeats glibc's link-time note on the `mktemp` inside FoundationEssentials as a warning.
            linkerSettings: sanitizerBuild ? []
                : [.unsafeFlags(["-static-stdlib", "-use-ld=lld"] + staticFoundationArchives, .when(platforms: [.linux]))]
        ),

        // MARK: examples (README "Examples")
        .target(
            name: "ExampleSupport",
            dependencies: [
                "Bluewire", "BluewireCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Examples/Support", swiftSettings: strict
        ),
        .executableTarget(
            name: "chat-peripheral", dependencies: ["ExampleSupport", "Bluewire", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/ChatRoom/Peripheral", swiftSettings: strict
        ),
        .executableTarget(
            name: "chat-central", dependencies: ["ExampleSupport", "Bluewire", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/ChatRoom/Central", swiftSettings: strict
        ),
        .executableTarget(
            name: "magic8ball-peripheral", dependencies: ["ExampleSupport", "Bluewire", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/Magic8Ball/Peripheral", swiftSettings: strict
        ),
        .executableTarget(
            name: "magic8ball-central", dependencies: ["ExampleSupport", "Bluewire", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/Magic8Ball/Central", swiftSettings: strict
        ),
        .executableTarget(
            name: "ota-peripheral", dependencies: ["ExampleSupport", "Bluewire", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/OTA/Peripheral", swiftSettings: strict
        ),
        .executableTarget(
            name: "ota-central", dependencies: ["ExampleSupport", "Bluewire", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/OTA/Central", swiftSettings: strict
        ),

        // MARK: tests
        .testTarget(name: "BluewireCoreTests", dependencies: ["BluewireCore"]),
        .testTarget(name: "BluewireSMPTests", dependencies: ["BluewireSMP", "BluewireCrypto", "BluewireCore", "PeerTestSupport"]),
        .testTarget(name: "BluewireSnoopTests", dependencies: ["BluewireSnoop", "BluewireCore", "PeerTestSupport"]),
        .testTarget(name: "BluewireHCITests", dependencies: ["BluewireHCI", "BluewireCore"]),
        .testTarget(name: "BluewireL2CAPTests", dependencies: ["BluewireL2CAP", "BluewireHCI", "BluewireCore", "PeerTestSupport"]),
        .testTarget(name: "BluewireATTTests", dependencies: ["BluewireATT", "BluewireCore"]),
        .testTarget(name: "BluewireGATTTests", dependencies: ["BluewireGATT", "BluewireATT", "BluewireCore"]),
        .testTarget(
            name: "BluewireAnalysisTests",
            dependencies: ["BluewireAnalysis", "BluewireSnoop", "BluewireHCI", "BluewireCore", "BluewireGATT", "PeerTestSupport"],
            resources: []
        ),
        .testTarget(
            name: "BluewireHostEngineTests",
            dependencies: [
                "BluewireHostEngine", "BluewireGATT", "BluewireATT", "BluewireL2CAP", "BluewireHCI", "BluewireCore", "BluewireSnoop",
                "BluewireSMP", "BluewireCrypto", "BluewireTesting", "HostTestSupport",
            ]
        ),
        // The engine against bumble (pairing, privacy, channels, raw commands): run one at a time.
        .testTarget(
            name: "BluewireHostEnginePeerTests",
            dependencies: [
                "BluewireHostEngine", "BluewireGATT", "BluewireATT", "BluewireL2CAP", "BluewireHCI", "BluewireCore", "BluewireSnoop",
                "BluewireSMP", "BluewireCrypto", "PeerTestSupport", "HostTestSupport",
            ]
        ),
        // Fixtures shared by a deterministic test target and its peer twin (BluewireHostEngineTests and
        // BluewireHostEnginePeerTests, BluewireHostTests and BluewireHostPeerTests), and by InteropTests
        // (the connection state machine's transitions).
        .target(
            name: "HostTestSupport",
            dependencies: [
                "Bluewire", "BluewireReplay", "BluewireCore", "BluewireGATT", "BluewireSMP", "BluewireSnoop",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/HostTestSupport"
        ),
        // Real-peer helpers (bumble_link.py, the child processes tests run, a scripted TCP server) shared
        // by the test targets.
        .target(name: "PeerTestSupport", path: "Tests/PeerTestSupport"),
        .testTarget(name: "BluewireTransportTests", dependencies: ["BluewireTransport", "BluewireCore", "BluewireSnoop", "PeerTestSupport"]),
        // The virtual controller and link on their own (no host): deterministic, run with the unit tests.
        .testTarget(
            name: "BluewireTestingTests",
            dependencies: ["BluewireTesting", "Bluewire", "BluewireCore", "BluewireHCI", "BluewireTransport", "PeerTestSupport"]
        ),
        .testTarget(
            name: "BluewireHostTests",
            dependencies: [
                "Bluewire", "BluewireTesting", "BluewireTransport", "BluewireCore", "BluewireHCI", "BluewireGATT", "BluewireATT",
                "BluewireHostEngine",
                "BluewireSnoop", "PeerTestSupport", "HostTestSupport", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The host against bumble and the `bluewire` executable run as a process (its replays wait on
        // real time): run one at a time.
        .testTarget(
            name: "BluewireHostPeerTests",
            dependencies: [
                "Bluewire", "BluewireTransport", "BluewireCore", "BluewireGATT", "BluewireSnoop", "PeerTestSupport", "HostTestSupport",
            ]
        ),
        .testTarget(
            name: "InteropTests",
            dependencies: ["ExampleSupport", "Bluewire", "BluewireTransport", "BluewireCore", "BluewireHCI", "BluewireATT", "BluewireGATT", "BluewireSnoop", "BluewireAnalysis", "BluewireTesting", "PeerTestSupport",
                           "HostTestSupport"]
        ),
    ]
)
