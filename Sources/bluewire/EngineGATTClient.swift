import Bluewire
import Foundation

/// The GATT client procedures `gatt read|write|subscribe` run on one link of an `EngineHost`: the
/// engine's `.gatt` requests (Core Vol 3 Part G §4), with security raised on demand by the engine
/// (Vol 3 Part C §10.3.2). After each procedure it says on stderr when the link's security changed
/// under it: paired (how, to which level) or encrypted with the stored bond.
actor EngineGATTClient {
    let host: EngineHost
    let link: HostConnection
    /// Where the bonds came from, for the messages.
    let keysPath: String
    /// Whether the bond file held a bond with this peer when the command started.
    let bondedBefore: Bool
    /// The ATT_MTU in use (Core Vol 3 Part F §3.2.8): 23 until `exchangeMTU()`.
    private(set) var exchangedMTU = 23

    init(host: EngineHost, link: HostConnection, keysPath: String, bondedBefore: Bool) {
        self.host = host
        self.link = link
        self.keysPath = keysPath
        self.bondedBefore = bondedBefore
    }

    /// Runs one GATT procedure on the link; reports a security change it caused.
    func perform(_ request: GATTClientRequest) async throws(GATTFailure) -> HostCompletion {
        let before = await host.security(of: link.handle)?.level ?? .unencrypted
        let result = await host.perform(.gatt(connection: link.handle, request))
        await reportSecurity(since: before)
        switch result {
        case .success(let completion): return completion
        case .failure(let error): throw GATTFailure(error, bondedBefore: bondedBefore, keysPath: keysPath, peer: link.peer)
        }
    }

    /// `bluewire: paired with ADDR (LE Secure Connections Passkey Entry): encrypted, authenticated, LE
    /// Secure Connections (level 4)`, or `bluewire: encrypted with the stored bond (FILE): …`.
    func reportSecurity(since before: LinkSecurityLevel) async {
        guard let now = await host.security(of: link.handle), now.level != before, now.level != .unencrypted else { return }
        let level = "\(PairOutput.levelName(now.level)) (level \(now.level.rawValue))"
        let line: String
        if let method = await host.pairingMethod(of: link.handle) {
            let secureConnections = await host.bonds.first { $0.peer == link.peer }?.secureConnections
            line = "paired with \(link.peer) (\(Self.methodName(method, secureConnections: secureConnections))): \(level)"
        } else {
            line = "encrypted with the stored bond (\(keysPath)): \(level)"
        }
        FileHandle.standardError.write(Data("bluewire: \(line)\n".utf8))
    }

    /// `LE Secure Connections Numeric Comparison`, `legacy pairing Passkey Entry`, `Just Works`...
    static func methodName(_ method: PairingMethod, secureConnections: Bool?) -> String {
        let name = switch method {
        case .justWorks: "Just Works"
        case .numericComparison: "Numeric Comparison"
        case .passkeyEntry: "Passkey Entry"
        case .outOfBand: "Out of Band"
        }
        switch secureConnections {
        case true?: return "LE Secure Connections " + name
        case false?: return "legacy pairing " + name
        case nil: return name
        }
    }

    /// Exchange MTU (§4.3.1): the ATT_MTU in use; 23 when the server refuses (the engine completes
    /// a refusal as the MTU unchanged). It fails only when the bearer cannot be used any more (no
    /// answer within 30 s, Core Vol 3 Part F §3.3.3) or the link ended: thrown, so that the command
    /// reports that, not the refusal of the discovery after it.
    func exchangeMTU() async throws(GATTFailure) -> Int {
        if case .mtu(let mtu) = try await perform(.exchangeMTU) { exchangedMTU = mtu }
        return exchangedMTU
    }

    func discoverAll() async throws(GATTFailure) -> [DiscoveredService] {
        guard case .services(let services) = try await perform(.discoverAll) else { throw .unexpected("discovery") }
        return services
    }

    /// Read Characteristic Value (§4.8.1), or Read Long Characteristic Values (§4.8.3) with `long`.
    func read(_ handle: UInt16, long: Bool) async throws(GATTFailure) -> [UInt8] {
        guard case .value(let value) = try await perform(long ? .readLong(handle: handle) : .read(handle: handle)) else {
            throw .unexpected("read")
        }
        return value
    }

    func write(_ value: [UInt8], to handle: UInt16, procedure: WriteProcedure) async throws(GATTFailure) {
        switch procedure {
        case .writeRequest: _ = try await perform(.write(handle: handle, value: value))
        case .preparedWrites: _ = try await perform(.writeLong(handle: handle, value: value))
        case .writeCommand: _ = try await perform(.writeWithoutResponse(handle: handle, value: value))
        }
    }

    /// How a value is written (Core Vol 3 Part G §4.9), as `gatt write` reports it.
    enum WriteProcedure: String {
        case writeRequest = "write request"
        case preparedWrites = "prepared writes"
        case writeCommand = "write command"
    }

    /// What a subscription receives: a value of the characteristic, or the end of the link.
    enum SubscriptionValue: Sendable {
        case value([UInt8], isIndication: Bool)
        case disconnected(HCIStatus)
    }

    /// The notifications and indications of the characteristic at `valueHandle` from now on
    /// (indications are confirmed by the engine, §4.11), ending after the link's disconnection.
    /// Listen before writing the CCCD so that no value is missed.
    func values(of valueHandle: UInt16) async -> AsyncStream<SubscriptionValue> {
        let events = await host.events()
        let connection = link.handle
        let (stream, continuation) = AsyncStream<SubscriptionValue>.makeStream()
        let forwarding = Task {
            for await event in events {
                switch event {
                case .notification(connection, valueHandle, let value, let isIndication):
                    continuation.yield(.value(Array(value), isIndication: isIndication))
                case .disconnected(connection, let reason):
                    continuation.yield(.disconnected(reason))
                    continuation.finish()
                    return
                default:
                    continue
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in forwarding.cancel() }
        return stream
    }

    /// Writes the CCCD (§4.12.3): notifications or indications on, or off with `enable` false.
    func configure(_ characteristic: DiscoveredCharacteristic, indications: Bool, enable: Bool) async throws(GATTFailure) {
        let descriptor = characteristic.clientConfigurationHandle
        _ = try await perform(enable
            ? .subscribe(characteristic.characteristic, indications: indications, descriptorHandle: descriptor)
            : .unsubscribe(characteristic.characteristic, descriptorHandle: descriptor))
    }
}

/// Why a GATT procedure on the engine failed, worded as `gatt` words it (`GATT: Invalid Handle (0x01)
/// answering Read Request on handle 0x0fff`, `disconnected: …`, the pairing's reason by name).
struct GATTFailure: Error, CustomStringConvertible {
    var description: String
    /// The engine's error, when the failure is one.
    var engineError: HostEngineError?

    init(_ description: String) { self.description = description }

    static func unexpected(_ what: String) -> GATTFailure { GATTFailure("unexpected answer to the \(what)") }

    init(_ error: HostEngineError, bondedBefore: Bool, keysPath: String, peer: BluetoothAddress) {
        engineError = error
        switch error {
        case .gatt(let error): description = "GATT: \(error)"
        case .att(.transactionTimeout):
            description = "no ATT response within 30 s (transaction timeout, Core Vol 3 Part F §3.3.3): the link was dropped"
        case .att(let error): description = "ATT bearer: \(error)"
        case .disconnected(let reason): description = "disconnected: \(reason)"
        case .security(.pairingFailed(let failure)): description = "pairing failed: \(Self.describe(failure))"
        case .security(.encryptionFailed(let status)) where bondedBefore:
            description = "encrypting with the stored bond failed: \(status) (if the peripheral lost its keys, "
                + "`bluewire bonds remove \(KeyFile.addressText(peer)) --keys \(keysPath)` to pair again)"
        case .security(.encryptionFailed(let status)): description = "encryption failed: \(status)"
        default: description = PairOutput.describe(error)
        }
    }

    static func describe(_ failure: PairingFailure) -> String {
        switch failure {
        case .local(let reason): "\(reason.name) (sent by this side)"
        case .remote(let reason): "\(reason.name) (sent by the peripheral)"
        case .timeout: "no answer within 30 s (SMP timeout)"
        }
    }
}

extension [DiscoveredService] {
    /// The handle to read or write for `handle`: a characteristic declaration's value handle, else
    /// `handle` itself (a value or descriptor handle).
    func valueHandle(for handle: UInt16) -> UInt16 {
        for service in self {
            if let found = service.characteristics.first(where: { $0.characteristic.handle == handle }) {
                return found.characteristic.valueHandle
            }
        }
        return handle
    }

    /// The characteristic whose value (or declaration) is at `handle`.
    func characteristic(at handle: UInt16) -> DiscoveredCharacteristic? {
        for service in self {
            if let found = service.characteristics.first(where: { $0.characteristic.valueHandle == handle || $0.characteristic.handle == handle }) {
                return found
            }
        }
        return nil
    }

    /// The descriptor at `handle`.
    func descriptor(at handle: UInt16) -> GATTDescriptor? {
        for service in self {
            for item in service.characteristics {
                if let descriptor = item.descriptors.first(where: { $0.handle == handle }) { return descriptor }
            }
        }
        return nil
    }
}
