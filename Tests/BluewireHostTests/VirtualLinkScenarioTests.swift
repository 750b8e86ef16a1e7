@_spi(Testing) import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireTesting
import Synchronization
import PeerTestSupport
import Testing

/// Bluewire hosts on one `VirtualLink`, every host's clock the link's `TestClock`: the in-process
/// stage of the central and peripheral interop scenarios.
///
/// With immediate timing nothing needs virtual time. With radio timing, advertising and connection
/// events take virtual time: a pump moves the clock 1 ms at a time and lets the hosts react after
/// each due timer, so a host never sees a timeout that the radio model did not cause.
final class VirtualLinkScene: Sendable {
    let clock: TestClock
    let link: VirtualLink
    let radio: Bool
    let controllers: [VirtualController]
    let hosts: [BluetoothHost]
    /// The random static address of each host.
    let addresses: [BluetoothAddress]
    private let pump: Task<Void, Never>?

    /// `mtus[i]` is host i's preferred ATT MTU (517 for hosts beyond the list).
    init(hosts count: Int, radio: Bool, mtus: [UInt16] = []) async throws {
        let clock = TestClock()
        let link = VirtualLink(clock: clock, timing: radio ? .radio() : .immediate)
        self.clock = clock
        self.link = link
        self.radio = radio
        let controllers = (0..<count).map { index in
            link.addController(publicAddress: BluetoothAddress(0x00, 0x1B, 0xDC, 0x5C, 0x00, UInt8(index + 1)))
        }
        let addresses = (0..<count).map { BluetoothAddress.randomStatic(0x5CE0_0000 + UInt64($0)) }
        self.controllers = controllers
        self.addresses = addresses
        hosts = (0..<count).map { index in
            BluetoothHost(
                transport: VirtualTransport(controller: controllers[index]),
                configuration: HostConfiguration(
                    randomAddress: addresses[index], preferredMTU: index < mtus.count ? mtus[index] : 517),
                clock: clock)
        }
        pump = radio ? Task { await clock.runFreely() } : nil
        for host in hosts { try await host.start() }
    }

    /// Every rule any host broke on its controller.
    var violations: [VirtualController.HostViolation] { controllers.flatMap(\.violations) }

    func close() async {
        pump?.cancel()
        for host in hosts { await host.close() }
    }

    /// Scans from `host` until a device named `name` shows everything `complete` wants (the scan
    /// response may arrive after the advertising data).
    func find(_ name: String, from host: BluetoothHost, until complete: (DiscoveredDevice) -> Bool = { _ in true }) async throws -> DiscoveredDevice {
        for try await device in await host.scan() where device.name == name && complete(device) {
            return device
        }
        throw ScenarioFailure("the scan ended without \(name)")
    }
}

struct ScenarioFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs `body` on a fresh scene and closes it afterwards, whatever happens.
func withScene<T>(
    hosts count: Int, radio: Bool, mtus: [UInt16] = [], _ body: (VirtualLinkScene) async throws -> T
) async throws -> T {
    let scene = try await VirtualLinkScene(hosts: count, radio: radio, mtus: mtus)
    do {
        let result = try await body(scene)
        await scene.close()
        return result
    } catch {
        await scene.close()
        throw error
    }
}

/// Collects what an `AsyncStream` yields, for assertions after the fact, and lets a test wait for
/// a number of matching elements.
final class Transcript<Element: Sendable>: Sendable {
    typealias Waiter = (count: Int, match: @Sendable (Element) -> Bool, continuation: CheckedContinuation<Void, Never>)
    final class State: Sendable {
        let lock = Mutex<(elements: [Element], waiters: [Waiter])>(([], []))
    }
    private let state = State()
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<Element>) {
        let state = self.state
        task = Task {
            for await element in stream {
                let ready = state.lock.withLock { state -> [CheckedContinuation<Void, Never>] in
                    state.elements.append(element)
                    var ready: [CheckedContinuation<Void, Never>] = []
                    let elements = state.elements
                    state.waiters.removeAll { waiter in
                        guard elements.filter(waiter.match).count >= waiter.count else { return false }
                        ready.append(waiter.continuation)
                        return true
                    }
                    return ready
                }
                for continuation in ready { continuation.resume() }
            }
        }
    }

    deinit { task.cancel() }

    var elements: [Element] { state.lock.withLock { $0.elements } }

    /// Waits until `count` elements match (they may have arrived already) and returns them all.
    @discardableResult
    func wait(for count: Int, where match: @escaping @Sendable (Element) -> Bool) async -> [Element] {
        await withCheckedContinuation { continuation in
            let done = state.lock.withLock { state -> Bool in
                if state.elements.filter(match).count >= count { return true }
                state.waiters.append((count, match, continuation))
                return false
            }
            if done { continuation.resume() }
        }
        return elements.filter(match)
    }
}

/// The peripheral's database in the scenarios: one of everything a central meets.
struct ScenarioDatabase: Sendable {
    static let service = BluetoothUUID(0xFFE0)
    static let name = "Scenario"
    static let manufacturer: (company: UInt16, data: [UInt8]) = (0xFFFF, [0x42, 0x57, 0x01])
    /// Longer than two Read Responses at ATT_MTU 247 (246 octets each): Read, then Read Blob.
    static let longValue = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    static let dynamicValue = Array("computed on every read, longer than one PDU at the default ATT_MTU".utf8)

    var database: GATTDatabase
    var long: UInt16
    var writable: UInt16
    var notifying: UInt16
    var indicating: UInt16
    var dynamic: UInt16
    /// Offsets the dynamic value's read handler was called with.
    let dynamicReads = SendableRecorder<Int>()

    init() throws {
        var builder = GATTDatabaseBuilder()
        try builder.addService(.genericAccess)
        try builder.addCharacteristic(.deviceName, properties: [.read], permissions: [.read], value: .cached(Array(Self.name.utf8)))
        try builder.addService(Self.service)
        long = try builder.addCharacteristic(BluetoothUUID(0xFFE1), properties: [.read], permissions: [.read], value: .cached(Self.longValue)).valueHandle
        writable = try builder.addCharacteristic(
            BluetoothUUID(0xFFE2), properties: [.read, .write, .writeWithoutResponse], permissions: [.read, .write], value: .cached([0])).valueHandle
        notifying = try builder.addCharacteristic(BluetoothUUID(0xFFE3), properties: [.read, .notify], permissions: [.read], value: .cached([1])).valueHandle
        indicating = try builder.addCharacteristic(BluetoothUUID(0xFFE4), properties: [.read, .indicate], permissions: [.read], value: .cached([2])).valueHandle
        let reads = dynamicReads
        dynamic = try builder.addCharacteristic(
            BluetoothUUID(0xFFE5), properties: [.read], permissions: [.read],
            value: .dynamic(GATTDynamicValue(read: { request throws(GATTAttributeError) in
                reads.append(request.offset)
                return try request.part(of: ScenarioDatabase.dynamicValue)
            }))).valueHandle
        database = builder.build()
    }

    /// What a full read of `handle` returns, as the database holds it before any write.
    func expectedValue(_ handle: UInt16) -> [UInt8]? {
        handle == dynamic ? Self.dynamicValue : database[handle: handle]?.cachedValue
    }

    var advertisement: Advertisement {
        get throws {
            try Advertisement(name: Self.name, services: [Self.service], extra: [
                .manufacturerSpecificData(companyIdentifier: Self.manufacturer.company, data: Self.manufacturer.data),
            ])
        }
    }
}
