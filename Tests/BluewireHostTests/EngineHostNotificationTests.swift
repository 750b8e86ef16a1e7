import Bluewire
import BluewireTesting
import Synchronization
import Testing

/// `EngineHost.setNotificationHandler`: notifications and indications reach a synchronous handler on
/// the host's executor, in order, with the connection they came on. Two EngineHosts on the virtual link.
@Suite("EngineHost: synchronous notification handler")
struct EngineHostNotificationTests {
    static let centralAddress = BluetoothAddress.randomStatic(0x0A0B_0C0D_1001)
    static let peripheralAddress = BluetoothAddress.randomStatic(0x0A0B_0C0D_1002)

    /// What the handler saw, and a wait for the n-th arrival.
    final class Arrivals: Sendable {
        struct State {
            var seen: [(UInt16, GATTNotification)] = []
            var waiter: (count: Int, continuation: CheckedContinuation<Void, Never>)?
        }
        let state = Mutex(State())

        func arrived(_ connection: UInt16, _ notification: GATTNotification) {
            let ready: CheckedContinuation<Void, Never>? = state.withLock { state in
                state.seen.append((connection, notification))
                guard let waiter = state.waiter, state.seen.count >= waiter.count else { return nil }
                state.waiter = nil
                return waiter.continuation
            }
            ready?.resume()
        }

        func wait(for count: Int) async {
            await withCheckedContinuation { continuation in
                let done = state.withLock { state in
                    if state.seen.count >= count { return true }
                    state.waiter = (count, continuation)
                    return false
                }
                if done { continuation.resume() }
            }
        }
    }

    @Test("three notifications arrive at the handler in order, with their connection, and as events too")
    func handlerGetsEveryValue() async throws {
        let clock = TestClock()
        let link = VirtualLink(clock: clock, timing: .immediate)
        let central = EngineHost(
            transport: VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.centralPublic)),
            configuration: HostEngineConfiguration(randomAddress: Self.centralAddress), clock: clock)
        let peripheral = EngineHost(
            transport: VirtualTransport(controller: link.addController(publicAddress: VirtualAddress.peripheralPublic)),
            configuration: HostEngineConfiguration(randomAddress: Self.peripheralAddress), clock: clock)
        var builder = GATTDatabaseBuilder()
        try builder.addService(BluetoothUUID(0xFE20))
        let value = try builder.addCharacteristic(
            BluetoothUUID(0xFE21), properties: [.read, .notify, .indicate], permissions: [.read], value: .cached([0]))
        await peripheral.setDatabase(builder.build())
        let arrivals = Arrivals()
        await central.setNotificationHandler { arrivals.arrived($0, $1) }
        let events = await central.events()

        _ = try await central.perform(.start).get()
        _ = try await peripheral.perform(.start).get()
        _ = try await peripheral.perform(.startAdvertising(.named("Notify"))).get()
        guard case .connected(let connection) = try await central.perform(.connect(Self.peripheralAddress, LEConnectionParameters())).get(),
              case .services(let services) = try await central.perform(.gatt(connection: connection.handle, .discoverAll)).get(),
              let characteristic = services.first(where: { $0.service.uuid == BluetoothUUID(0xFE20) })?.characteristics.first
        else {
            Issue.record("no connection or characteristic")
            return
        }
        _ = try await central.perform(.gatt(connection: connection.handle, .subscribe(
            characteristic.characteristic, indications: false, descriptorHandle: characteristic.clientConfigurationHandle))).get()
        for byte: UInt8 in 1...3 {
            _ = try await peripheral.perform(.notify(valueHandle: value.valueHandle, value: [byte], connection: nil)).get()
        }
        await arrivals.wait(for: 3)
        let seen = arrivals.state.withLock { $0.seen }
        #expect(seen.map(\.0) == [connection.handle, connection.handle, connection.handle])
        #expect(seen.map { Array($0.1.value) } == [[1], [2], [3]])
        #expect(seen.allSatisfy { $0.1.handle == value.valueHandle && !$0.1.isIndication })

        // The events carry the same values, after the handler saw them.
        var fromEvents: [[UInt8]] = []
        for await event in events {
            if case .notification(_, _, let bytes, _) = event { fromEvents.append(Array(bytes)) }
            if fromEvents.count == 3 { break }
        }
        #expect(fromEvents == [[1], [2], [3]])
        await central.close()
        await peripheral.close()
    }
}
