import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import BluewireSMP

/// The peripheral image: advertises as "Bluewire-MCU", serves Heart Rate (a measurement notified
/// once a second while a central is subscribed), the echo characteristic and a characteristic readable
/// only on an encrypted link. It pairs (LE Secure Connections, Just Works or Passkey Entry with the
/// passkey on the log; legacy pairing when the central asks for it) with the controller's crypto, and
/// keeps its bonds in the key store, so a bonded central encrypts again after a reset without pairing.
struct HeartRatePeripheral: FirmwareApplication {
    /// The advertised name, handed to the engine as UTF-8 octets: `HostAdvertisement.named` takes a
    /// String, whose UTF-8 view costs the image about 2 KB of flash.
    static let name: StaticString = "Bluewire-MCU"
    var requests = RequestNumbers()
    var startID = HostRequestID(0)
    var handles: HeartRateDatabase
    /// Connections subscribed to the measurement.
    var subscribers: [UInt16] = []
    var nextBeat: UInt32 = 0
    var beat: UInt8 = 0
    var notificationsSent = 0

    var store: SemihostingKeyStore
    var address: BluetoothAddress

    init(handles: HeartRateDatabase, store: SemihostingKeyStore, address: BluetoothAddress) {
        self.handles = handles
        self.store = store
        self.address = address
    }

    mutating func start(_ engine: inout HostEngine) {
        // Display only: Passkey Entry with a central that has a keyboard, Just Works otherwise (Core Vol 3
        // Part H §2.3.5.1). The crypto is the controller's: the image carries no AES or P-256 code.
        engine.configureSecurity(HostSecurityConfiguration(
            pairing: PairingConfiguration(ioCapability: .displayOnly), crypto: .controller))
        log("bluewire peripheral: bringing the controller up")
        startID = requests.take()
        engine.perform(.start, id: startID, now: Board.now)
    }

    mutating func handle(_ output: HostEngineOutput, _ engine: inout HostEngine) {
        switch output {
        case .completed(let id, .success(.started(let info))) where id == startID:
            log("controller up: HCI version \(info.version.hciVersion), LE ACL \(info.leACLDataPacketLength) x \(info.totalNumLEACLDataPackets)")
            engine.setDatabase(handles.database)
            engine.perform(
                .startAdvertising(HostAdvertisement(data: [
                    // What `.named(_:services:)` advertises, the name as a raw Complete Local Name.
                    .flags([.leGeneralDiscoverableMode, .brEdrNotSupported]),
                    .serviceUUIDs([HeartRateDatabase.heartRateService], complete: true),
                    .raw(type: .completeLocalName, data: Self.name.withUTF8Buffer { Array($0) }),
                ])),
                id: requests.take(), now: Board.now)
            logHeap("after bring-up")
        case .completed(let id, .failure) where id == startID:
            log("bring-up failed")
        case .completed(_, .failure):
            log("a request failed")
        case .completed:
            break
        case .event(let event):
            handle(event, &engine)
        case .send:
            break
        }
    }

    mutating func handle(_ event: HostEngineEvent, _ engine: inout HostEngine) {
        switch event {
        case .advertisingStarted:
            log("advertising as \(Self.name)")
        case .connected(let connection):
            log("connected: handle \(connection.handle), peer \(connection.peer)")
        case .disconnected(let handle, let reason):
            subscribers.removeAll { $0 == handle }
            log("disconnected: handle \(handle), reason 0x\(hex: [reason.rawValue])")
            logHeap("after disconnection")
        case .passkeyDisplay(_, let passkey):
            log("passkey \(passkey, width: 6)")
        case .paired(let connection, let keys, let bonded, _):
            let kind: StaticString = keys.secureConnections ? "LE Secure Connections" : "legacy"
            let bonding: StaticString = bonded ? ", bonded" : ""
            log("paired: handle \(connection), \(kind)\(bonding), \(engine.controllerCryptoCommandCount) controller crypto commands so far")
            if bonded { store.save(StoredKeys(address: address, bonds: engine.bonds)) }
        case .pairingFailed(let connection, _):
            log("pairing failed on handle \(connection)")
        case .encryptionChanged(let connection, let level, let keySize):
            log("encrypted: handle \(connection), level \(level.rawValue), key size \(keySize)")
        case .mtuChanged(let connection, let mtu):
            log("mtu \(mtu) on handle \(connection)")
        case .server(.subscriptionChanged(let subscription)):
            if subscription.valueHandle == handles.measurementHandle {
                subscribers.removeAll { $0 == subscription.connection }
                if subscription.configuration & 0x0001 != 0 { subscribers.append(subscription.connection) }
                let state: StaticString = subscription.configuration & 1 != 0 ? "on" : "off"
                log("heart rate notifications \(state) for handle \(subscription.connection)")
            } else {
                log("subscription 0x\(hex: [UInt8(subscription.configuration)]) on attribute \(subscription.valueHandle)")
            }
        case .server(.valueWritten(let connection, let handle, let value)) where handle == handles.echoHandle:
            log("echo: \(value.count) octets written: \(hex: value)")
            engine.perform(.notify(valueHandle: handle, value: value, connection: connection), id: requests.take(), now: Board.now)
        default:
            break
        }
    }

    mutating func tick(_ engine: inout HostEngine) {
        let now = Board.milliseconds
        guard !subscribers.isEmpty, now >= nextBeat else { return }
        nextBeat = now + 1000
        beat = beat &+ 1
        let rate = 60 + beat % 20
        try? engine.setValue([0x00, rate], for: handles.measurementHandle)
        engine.perform(.notify(valueHandle: handles.measurementHandle, value: [0x00, rate], connection: nil),
                       id: requests.take(), now: Board.now)
        notificationsSent += 1
        if notificationsSent % 5 == 0 { logHeap("\(notificationsSent) heart rate notifications sent") }
    }
}

@main
struct Firmware {
    static func main() {
        log("Bluewire firmware (peripheral), Embedded Swift on Cortex-M4")
        guard let handles = try? HeartRateDatabase() else {
            log("database does not build")
            return
        }
        var store = SemihostingKeyStore()
        let stored = store.load()
        // The board's identity: the stored address, else the image's (saved with the first bond).
        let address = stored?.address ?? BluetoothAddress(value: 0xC0_FF_EE_00_00_01, type: .random)
        if let stored { log("key store: \(stored.bonds.count) bonds, address \(stored.address)") }
        var application = HeartRatePeripheral(handles: handles, store: store, address: address)
        runEngine(&application, address: address) { engine in
            for bond in stored?.bonds ?? [] { engine.addBond(bond) }
        }
    }
}
