import Bluewire
import BluewireCore
import BluewireHCI
import Testing

/// A stop that follows a start at once is handled after it: the host's procedures run in the order
/// they were asked for (the engine feeds them in order), so a `stopScan()` right after `scan()` does
/// not put Scan Disable on the wire before Scan Enable and leave the controller scanning while the
/// host says Disconnected.Initial, which made the next `scan()` fail with Command Disallowed. The
/// engine's own tests (CentralEngineTests, PeripheralEngineTests) check the command order on the
/// wire; these check what an application of `BluetoothHost` sees, on the virtual link.
@Suite("BluetoothHost: a stop right after a start")
struct HostProcedureOrderTests {
    static let filter = AdvertisingFilter(addresses: [FaultBench.peripheralAddress])

    @Test("scan() then stopScan() at once: the scan finishes, the scan path is Disconnected.Initial, and the next scan finds the peripheral")
    func scanThenStop() async throws {
        let bench = try await FaultBench.make()
        let central = bench.central
        var first = await central.scan(filter: Self.filter).makeAsyncIterator()
        await central.stopScan()
        while try await first.next() != nil {}
        #expect(await central.scanState == .initial)
        var second = await central.scan(filter: Self.filter).makeAsyncIterator()
        #expect(try await second.next()?.address == FaultBench.peripheralAddress, "the controller was left not scanning")
        await central.stopScan()
        #expect(try await second.next() == nil)
        await bench.close()
    }

    @Test("three scans stopped at once in a row leave the controller able to scan")
    func repeatedScanStop() async throws {
        let bench = try await FaultBench.make()
        let central = bench.central
        for _ in 0..<3 {
            var scan = await central.scan(filter: Self.filter).makeAsyncIterator()
            await central.stopScan()
            while try await scan.next() != nil {}
        }
        #expect(await central.scanState == .initial)
        var last = await central.scan(filter: Self.filter).makeAsyncIterator()
        #expect(try await last.next()?.address == FaultBench.peripheralAddress)
        await central.stopScan()
        await bench.close()
    }

    @Test("stopAdvertising() right after startAdvertising() returns: not advertising, and advertising again works")
    func advertiseThenStop() async throws {
        let bench = try await FaultBench.make()
        let peripheral = bench.peripheral
        try await peripheral.stopAdvertising()
        _ = try await peripheral.startAdvertising(try Advertisement(name: "Faults", services: [FaultDatabase.service]))
        try await peripheral.stopAdvertising()
        #expect(await peripheral.isAdvertising == false)
        #expect(await peripheral.advertisingPlan == nil)
        _ = try await peripheral.startAdvertising(try Advertisement(name: "Faults", services: [FaultDatabase.service]))
        #expect(await peripheral.isAdvertising)
        var scan = await bench.central.scan(filter: Self.filter).makeAsyncIterator()
        #expect(try await scan.next()?.address == FaultBench.peripheralAddress)
        await bench.central.stopScan()
        await bench.close()
    }
}
