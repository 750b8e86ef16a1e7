import Bluewire
import BluewireTesting
import Testing

/// `EngineConnection` as an `ATTRequestPerformer` when the caller stops waiting or the link goes: the
/// scripted peripheral (`CentralTestPeripheral`) stays silent on a Read Request, and host time is a
/// `TestClock`, so the 30 s ATT transaction timeout passes in microseconds.
@Suite("EngineConnection as an ATTRequestPerformer: cancellation and the link's end")
struct EngineATTPerformerCancellationTests {
    @Test("a cancelled request throws .cancelled at once; a queued one cancelled is never sent; after the timeout the streams finish")
    func cancellationAndTimeout() async throws {
        let clock = TestClock()
        let fixture = try CentralTestDatabase()
        let peripheral = CentralTestPeripheral(database: fixture.database)
        let host = EngineHost(
            transport: peripheral, configuration: HostEngineConfiguration(randomAddress: .randomStatic(0x0A7A_7E00_0002)), clock: clock)
        _ = try await host.perform(.start).get()
        let connection = try await host.connect(to: CentralTestPeripheral.peerAddress)
        let events = await host.events()
        let notifications = await connection.notifications(for: fixture.counter.valueHandle)
        let handle = fixture.control.valueHandle
        peripheral.inject(.silence, onPDU: .readRequest)
        var faults = peripheral.faultsApplied.makeAsyncIterator()

        let onAir = Task { () async throws(ConnectionError) -> ATTPDU in try await connection.request(.readRequest(handle: handle)) }
        #expect(await faults.next() == .readRequest, "the read is on the air and will not be answered")
        // Queued behind the silent read (or, if cancelled before it reached the host, never handed over:
        // either way it must not go out).
        let queued = Task { () async throws(ConnectionError) -> ATTPDU in try await connection.request(.writeRequest(handle: handle, value: [1])) }
        queued.cancel()
        #expect(await queued.result.failure as? ConnectionError == .cancelled)
        onAir.cancel()
        #expect(await onAir.result.failure as? ConnectionError == .cancelled)
        #expect(peripheral.receivedPDUs.filter { $0.first == ATTOpcode.writeRequest.rawValue }.isEmpty, "the withdrawn write went out")

        // The silent read times out (Core Vol 3 Part F §3.3.3) and the engine drops the link: the
        // notification stream finishes, and requests fail as on a link that is gone.
        await clock.advance(by: .seconds(30))
        for await event in events { if case .disconnected = event { break } }
        var values = 0
        for await _ in notifications { values += 1 }
        #expect(values == 0)
        let late = await connection.notifications(for: fixture.counter.valueHandle)
        for await _ in late { values += 1 }
        #expect(values == 0, "a stream asked for on a link that is gone finishes at once")
        await #expect(throws: ConnectionError.disconnected(.unknownConnectionIdentifier)) {
            try await connection.send(.writeCommand(handle: handle, value: [2]))
        }
        await host.close()
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
