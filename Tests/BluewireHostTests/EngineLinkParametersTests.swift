import Bluewire
import BluewireTesting
import BluewireTransport
import Foundation
import PeerTestSupport
import Testing

/// `EngineConnection.updateParameters` and `setDataLength` (LE Connection Update, LE Set Data Length;
/// Core Vol 4 Part E §7.8.18, §7.8.33) on live links: to bumble's controller and peripheral
/// (`EngineLinkParametersBumbleTests`), and between two EngineHosts on the virtual link, whose
/// controller model runs the data length update procedure that bumble's lacks.
@Suite("EngineConnection: link parameters", .serialized)
struct EngineLinkParametersTests {
    /// The first `.dataLengthChanged` on `handle` whose lengths `matching` accepts.
    static func dataLengthChange(
        _ events: AsyncStream<HostEngineEvent>, handle: UInt16, _ matching: (UInt16, UInt16, UInt16, UInt16) -> Bool
    ) async -> [UInt16]? {
        for await event in events {
            if case .dataLengthChanged(handle, let txOctets, let txTime, let rxOctets, let rxTime) = event,
               matching(txOctets, txTime, rxOctets, rxTime) {
                return [txOctets, txTime, rxOctets, rxTime]
            }
        }
        return nil
    }

    @Test("virtual link: LE Set Data Length gives LE Data Length Change on both hosts; a connection update completes with the controller's choice")
    func virtualLink() async throws {
        let clock = TestClock()
        let link = VirtualLink(clock: clock, timing: .immediate)
        let central = EngineHost(
            transport: VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.centralPublic)),
            configuration: HostEngineConfiguration(randomAddress: .randomStatic(0x0A0B_0C0D_0E11)), clock: clock)
        let peripheralAddress = BluetoothAddress.randomStatic(0x0A0B_0C0D_0E12)
        let peripheral = EngineHost(
            transport: VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.peripheralPublic)),
            configuration: HostEngineConfiguration(randomAddress: peripheralAddress), clock: clock)
        _ = try await central.perform(.start).get()
        _ = try await peripheral.perform(.start).get()
        _ = try await peripheral.perform(.startAdvertising(.named("Params"))).get()
        let centralEvents = await central.events()
        let peripheralEvents = await peripheral.events()
        let connection = try await central.connect(to: peripheralAddress)

        try await connection.setDataLength(txOctets: 100, txTime: 912)
        // The controller model's air time for 100 octets on LE 1M: (100 + 14) × 8 µs.
        let ours = await Self.dataLengthChange(centralEvents, handle: connection.handle) { tx, _, _, _ in tx == 100 }
        #expect(ours?.prefix(2) == [100, 912])
        let theirs = await Self.dataLengthChange(peripheralEvents, handle: connection.handle) { _, _, rx, _ in rx == 100 }
        #expect(theirs?.suffix(2) == [100, 912], "the peripheral receives 100-octet packets now")

        // This controller model takes Connection_Interval_Min.
        let now = try await connection.updateParameters(LEConnectionParameters(
            connectionIntervalMin: 0x0020, connectionIntervalMax: 0x0030, maxLatency: 1, supervisionTimeout: 0x0200))
        #expect(now == HostConnectionParameters(interval: 0x0020, latency: 1, supervisionTimeout: 0x0200))
        await #expect(throws: HostEngineError.linkParameters(.txOctets(252))) {
            try await connection.setDataLength(txOctets: 252, txTime: 2120)
        }
        _ = try await connection.disconnect()
        await central.close()
        await peripheral.close()
    }
}
