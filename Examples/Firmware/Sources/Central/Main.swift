import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import BluewireSMP

/// The central image: scans for a peripheral named `target`, connects, exchanges MTU, discovers the
/// whole database, reads every readable characteristic, subscribes to every notifying one, prints
/// what arrives, and disconnects after `notificationsWanted` notifications.
struct ExploringCentral: FirmwareApplication {
    static let target = "Bluewire-Sensor"
    static let notificationsWanted = 3
    var requests = RequestNumbers()
    var startID = HostRequestID(0)
    var connectID = HostRequestID(0)
    var discoverID = HostRequestID(0)
    var handle: UInt16?
    var connecting = false
    /// Outstanding reads and subscriptions: value handle by request number.
    var reads: [(HostRequestID, UInt16)] = []
    var subscriptions: [(HostRequestID, UInt16)] = []
    var notifications = 0
    var finished = false
    var store = SemihostingKeyStore()
    var address: BluetoothAddress

    init(address: BluetoothAddress) { self.address = address }

    mutating func start(_ engine: inout HostEngine) {
        // A read refused with Insufficient Encryption/Authentication makes the engine pair (or encrypt with
        // a bond) and read again (Core Vol 3 Part C §10.3.2); so does a peripheral's Security Request.
        engine.configureSecurity(HostSecurityConfiguration(
            pairing: PairingConfiguration(ioCapability: .noInputNoOutput), crypto: .controller))
        log("bluewire central: bringing the controller up")
        startID = requests.take()
        engine.perform(.start, id: startID, now: Board.now)
    }

    mutating func handle(_ output: HostEngineOutput, _ engine: inout HostEngine) {
        switch output {
        case .completed(let id, .success(.started(let info))) where id == startID:
            log("controller up: HCI version \(info.version.hciVersion), LE ACL \(info.leACLDataPacketLength) x \(info.totalNumLEACLDataPackets)")
            engine.perform(.startScan(ScanParameters(), filter: AdvertisingFilter(namePrefix: Self.target)),
                           id: requests.take(), now: Board.now)
            log("scanning for \(Self.target)")
        case .completed(let id, .success(.connected(let connection))) where id == connectID:
            handle = connection.handle
            log("connected: handle \(connection.handle), peer \(connection.peer)")
            engine.perform(.gatt(connection: connection.handle, .exchangeMTU), id: requests.take(), now: Board.now)
            discoverID = requests.take()
            engine.perform(.gatt(connection: connection.handle, .discoverAll), id: discoverID, now: Board.now)
        case .completed(let id, .failure) where id == connectID:
            log("connection failed; scanning again")
            connecting = false
            engine.perform(.startScan(ScanParameters(), filter: AdvertisingFilter(namePrefix: Self.target)),
                           id: requests.take(), now: Board.now)
        case .completed(_, .success(.mtu(let mtu))):
            log("mtu \(mtu)")
        case .completed(let id, .success(.services(let services))) where id == discoverID:
            discovered(services, &engine)
        case .completed(let id, let result):
            finished(id, result)
        case .event(let event):
            handle(event, &engine)
        case .send:
            break
        }
    }

    mutating func discovered(_ services: [DiscoveredService], _ engine: inout HostEngine) {
        guard let handle else { return }
        log("discovered \(services.count) services")
        for service in services {
            log("service \(service.service.uuid) handles \(service.service.handle)-\(service.service.endHandle)")
            for item in service.characteristics {
                let characteristic = item.characteristic
                log("  characteristic \(characteristic.uuid) value handle \(characteristic.valueHandle) properties 0x\(hex: [characteristic.properties.rawValue]), \(item.descriptors.count) descriptors")
                if characteristic.properties.contains(.read) {
                    let id = requests.take()
                    reads.append((id, characteristic.valueHandle))
                    engine.perform(.gatt(connection: handle, .read(handle: characteristic.valueHandle)), id: id, now: Board.now)
                }
                if characteristic.properties.contains(.notify) {
                    let id = requests.take()
                    subscriptions.append((id, characteristic.valueHandle))
                    engine.perform(
                        .gatt(connection: handle, .subscribe(characteristic, indications: false, descriptorHandle: item.clientConfigurationHandle)),
                        id: id, now: Board.now)
                }
            }
        }
        logHeap("after discovery")
    }

    mutating func finished(_ id: HostRequestID, _ result: Result<HostCompletion, HostEngineError>) {
        if let index = reads.firstIndex(where: { $0.0 == id }) {
            let valueHandle = reads.remove(at: index).1
            if case .success(.value(let value)) = result {
                log("read handle \(valueHandle): \(hex: value)")
            } else {
                log("read handle \(valueHandle) failed")
            }
        } else if let index = subscriptions.firstIndex(where: { $0.0 == id }) {
            let valueHandle = subscriptions.remove(at: index).1
            if case .success = result {
                log("subscribed to handle \(valueHandle)")
            } else {
                log("subscribing to handle \(valueHandle) failed")
            }
        } else if case .failure = result {
            log("request \(id.rawValue) failed")
        }
    }

    mutating func handle(_ event: HostEngineEvent, _ engine: inout HostEngine) {
        switch event {
        case .deviceFound(let device):
            guard !connecting, !finished, device.connectable else { return }
            connecting = true
            log("found \(device.name ?? "?") at \(device.address), rssi \(device.rssi)")
            engine.perform(.stopScan, id: requests.take(), now: Board.now)
            connectID = requests.take()
            engine.perform(.connect(device.address, LEConnectionParameters()), id: connectID, now: Board.now)
        case .notification(let connection, let attribute, let value, _):
            notifications += 1
            log("notification from handle \(attribute): \(hex: value)")
            if notifications == Self.notificationsWanted {
                engine.perform(.disconnect(handle: connection, reason: .remoteUserTerminatedConnection),
                               id: requests.take(), now: Board.now)
            }
        case .paired(let connection, let keys, let bonded, _):
            let kind: StaticString = keys.secureConnections ? "LE Secure Connections" : "legacy"
            let bonding: StaticString = bonded ? ", bonded" : ""
            log("paired: handle \(connection), \(kind)\(bonding), \(engine.controllerCryptoCommandCount) controller crypto commands so far")
            if bonded { store.save(StoredKeys(address: address, bonds: engine.bonds)) }
        case .pairingFailed(let connection, _):
            log("pairing failed on handle \(connection)")
        case .encryptionChanged(let connection, let level, let keySize):
            log("encrypted: handle \(connection), level \(level.rawValue), key size \(keySize)")
        case .disconnected(let handle, let reason):
            self.handle = nil
            finished = true
            log("disconnected: handle \(handle), reason 0x\(hex: [reason.rawValue])")
            logHeap("central done")
            log("central: done")
        default:
            break
        }
    }

    mutating func tick(_ engine: inout HostEngine) {}
}

@main
struct Firmware {
    static func main() {
        log("Bluewire firmware (central), Embedded Swift on Cortex-M4")
        var store = SemihostingKeyStore()
        let stored = store.load()
        let address = stored?.address ?? BluetoothAddress(value: 0xC0_FF_EE_00_00_02, type: .random)
        if let stored { log("key store: \(stored.bonds.count) bonds, address \(stored.address)") }
        var application = ExploringCentral(address: address)
        runEngine(&application, address: address) { engine in
            for bond in stored?.bonds ?? [] { engine.addBond(bond) }
        }
    }
}
