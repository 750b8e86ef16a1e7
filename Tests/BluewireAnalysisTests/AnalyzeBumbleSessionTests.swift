import BluewireAnalysis
import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireSnoop
import Testing

/// The analyzer on a session Bluewire recorded as central against a bumble peripheral whose GATT
/// database is known (`Captures/bumble_central_gatt_dump.btsnoop`, made by the replay tests of
/// BluewireHostTests from the description repeated here).
@Suite("Analyzing a Bluewire session with a bumble peripheral")
struct AnalyzeBumbleSessionTests {
    static let analysis = CaptureAnalyzer.analyze(
        CaptureReader.readAll(AnalysisFixtures.bytes("bumble_central_gatt_dump.btsnoop")).records)

    /// The peripheral's services as `bumble_link.py --gatt` was given them (ReplayCentralSessionTests).
    static let longValue = (0..<150).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
    static let served: [(service: BluetoothUUID, characteristic: BluetoothUUID, properties: CharacteristicProperties, value: [UInt8])] = [
        (BluetoothUUID(0x180F), BluetoothUUID(0x2A19), [.read, .notify], [0x64]),
        (uuid("6E400001-B5A3-F393-E0A9-E50E24DCCA9E"), uuid("6E400002-B5A3-F393-E0A9-E50E24DCCA9E"), [.read, .write], Array("Hello".utf8)),
        (uuid("6E400001-B5A3-F393-E0A9-E50E24DCCA9E"), uuid("6E400003-B5A3-F393-E0A9-E50E24DCCA9E"), [.read], longValue),
    ]

    static func uuid(_ text: String) -> BluetoothUUID { BluetoothUUID(parsing: text) ?? BluetoothUUID(0) }

    @Test("the session's link: Bluewire central, MTU 64 from the exchange, one connection closed by the host")
    func link() throws {
        try #require(Self.analysis.connections.count == 1)
        let connection = Self.analysis.connections[0]
        #expect(connection.localRole == .central)
        #expect(connection.peerAddress?.type == .random)
        #expect(connection.clientRxMTU == 64)
        #expect(connection.attMTU == 64)
        #expect(connection.disconnectReason == HCIStatus.remoteUserTerminatedConnection)
    }

    @Test("the exported database holds every served characteristic with its properties and value, long ones assembled")
    func exportMatchesWhatWasServed() throws {
        let device = try #require(Self.analysis.devices.first)
        let loaded = try GATTDatabase(json: try device.database().exportJSON())
        for entry in Self.served {
            let characteristic = try #require(loaded.characteristics.first { $0.uuid == entry.characteristic }, "\(entry.characteristic)")
            #expect(characteristic.properties == entry.properties)
            #expect(loaded[handle: characteristic.valueHandle]?.cachedValue == entry.value, "value of \(entry.characteristic)")
            let service = try #require(loaded.attributes.last {
                $0.isServiceDeclaration && $0.handle < characteristic.declarationHandle
            })
            #expect(service.cachedValue == entry.service.attBytes)
        }
        let connection = Self.analysis.connections[0]
        let long = try #require(loaded.characteristics.first { $0.uuid == Self.served[2].characteristic })
        // ATT_MTU 64: a Read Response of 63 octets, then Read Blobs until the value is whole.
        #expect(connection.peerServer.activity(of: long.valueHandle).reads == 1)
        #expect(connection.attOpcodeCounts[0x0C] == 2, "two Read Blob Requests for 150 octets")
    }
}
