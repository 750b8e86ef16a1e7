import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine

/// The measuring side of a throughput run on an `EngineHost` link where the local device is central
/// (`bluewire throughput`): the same modes, options and report as `ThroughputClient` on a
/// `BluetoothHost` `Connection`, with every packet decision in the host engine.
///
/// ```swift
/// let connection = try await host.connect(to: peer)
/// let report = try await EngineThroughputClient(connection: connection).run(ThroughputOptions(mode: .notify, duration: .seconds(3))) {
///     print("\($0.kilobitsPerSecond) kbit/s")
/// }
/// ```
///
/// - notify: subscribes and counts the notifications (lost and out-of-order ones by their sequence
///   numbers), decoded by the engine and handed over on the host's executor as they arrive
///   (`EngineHost.setNotificationHandler`), until `duration` has passed; then unsubscribes.
/// - write-without-response: resets the peer's sink (if it has Bluewire's sink report) and has the
///   engine stream sequence-numbered Write Commands (`HostRequest.streamATT`): it keeps the link's ACL
///   queue topped up as the controller returns buffers, so nothing here runs per packet. Then reads
///   the sink report: what arrived, lost, out of order.
/// - write: Write Requests one at a time (`.gatt(.write)`), timing each round trip.
///
/// The run replaces the host's notification handler while it measures notifications. Times come from
/// the host's clock.
public struct EngineThroughputClient: Sendable {
    public let connection: EngineConnection

    public init(connection: EngineConnection) {
        self.connection = connection
    }

    var host: EngineHost { connection.host }
    var handle: UInt16 { connection.handle }

    /// Runs one measurement and returns its report. `progress` is called about every
    /// `options.progressInterval` while it runs (from another task: it must not block).
    public func run(
        _ options: ThroughputOptions, progress: @escaping @Sendable (ThroughputProgress) -> Void = { _ in }
    ) async throws(ThroughputError) -> ThroughputReport {
        if options.mode == .l2cap { throw .notGATT(.l2cap) }
        if options.exchangesMTU { _ = try await perform(.exchangeMTU) }
        let mtu = await host.mtu(of: handle) ?? 23
        let (characteristic, report) = try await locate(options)
        var phy = if let phys = options.phy { await requestPHY(phys) } else { Optional<(tx: UInt8, rx: UInt8)>.none }
        let phyRequestFailed = options.phy != nil && phy == nil
        // The report always says which PHY the run used: the one asked for, or the link's.
        if phy == nil, case .success(.phy(let tx, let rx)) = await host.perform(.readPHY(connection: handle)) { phy = (tx, rx) }
        var result: ThroughputReport
        switch options.mode {
        case .notify:
            result = try await measureNotifications(characteristic, options, mtu: mtu, progress: progress)
        case .l2cap:
            throw .notGATT(.l2cap)
        case .write, .writeWithoutResponse:
            let maximum = ThroughputProfile.maximumPayloadLength(mtu: mtu)
            let length = options.payloadLength ?? maximum
            guard length >= ThroughputProfile.sequenceLength, length <= maximum else { throw .payloadLength(length, maximum: maximum) }
            result = try await EngineThroughputLink(connection: connection).measureWrites(
                characteristic.characteristic.valueHandle, report: report?.valueHandle, length: length, options, mtu: mtu, progress: progress)
        }
        result.phy = phy.map { ThroughputReport.PHYs(tx: $0.tx, rx: $0.rx) }
        result.phyRequestFailed = phyRequestFailed
        return result
    }

    /// A GATT client request on the link; a disconnection is `.disconnected` with its reason.
    func perform(_ request: GATTClientRequest) async throws(ThroughputError) -> HostCompletion {
        do {
            return try await connection.perform(request)
        } catch {
            throw Self.map(error)
        }
    }

    static func map(_ error: HostEngineError) -> ThroughputError {
        if case .disconnected(let reason) = error { return .disconnected(reason) }
        return .engine(error)
    }

    /// The characteristic to measure with, and the sink report in the same service, if any (as
    /// `ThroughputClient.locate`).
    func locate(_ options: ThroughputOptions) async throws(ThroughputError) -> (DiscoveredCharacteristic, GATTCharacteristic?) {
        guard case .services(let services) = try await perform(.discoverAll) else {
            throw .characteristicNotFound(handle: options.valueHandle, mode: options.mode)
        }
        let needed = try options.requiredProperties()
        for service in services {
            for item in service.characteristics {
                guard try options.selects(item.characteristic, needing: needed) else { continue }
                let report = service.characteristics.first { $0.characteristic.uuid == ThroughputProfile.sinkReport }
                return (item, report?.characteristic)
            }
        }
        throw .characteristicNotFound(handle: options.valueHandle, mode: options.mode)
    }

    /// Asks for `phys` both ways (LE Set PHY) and waits, at most `timeout` on the host's clock, for LE
    /// PHY Update Complete. The PHYs then in force, or nil when the controller refused, did not
    /// answer, or the link layer changed nothing in time: the run goes on with the link's PHY.
    func requestPHY(_ phys: LEPHYSet, timeout: TimeSpan = .seconds(2)) async -> (tx: UInt8, rx: UInt8)? {
        let host = self.host, handle = self.handle
        // Subscribed before the command goes out, so the update cannot slip past.
        let events = await host.events()
        let clock = host.clock
        return await withTaskGroup(of: (tx: UInt8, rx: UInt8)?.self) { group in
            // Iterated from the start, so that cancelling it ends the stream (and the host's
            // observer) on every path.
            group.addTask {
                for await event in events {
                    if case .phyUpdated(handle, let tx, let rx) = event { return (tx, rx) }
                }
                return nil
            }
            guard case .success = await host.perform(.setPHY(connection: handle, tx: phys, rx: phys)) else {
                group.cancelAll()
                return nil
            }
            let deadline = clock.now + timeout
            group.addTask {
                try? await clock.sleep(until: deadline)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    // MARK: Notify

    func measureNotifications(
        _ characteristic: DiscoveredCharacteristic, _ options: ThroughputOptions, mtu: Int,
        progress: @escaping @Sendable (ThroughputProgress) -> Void
    ) async throws(ThroughputError) -> ThroughputReport {
        // The run starts before the subscription, as in `ThroughputClient`: notifications the peer
        // sends before the CCCD write's response are counted, so they must be timed from here.
        let host = self.host, handle = self.handle, clock = host.clock
        let valueHandle = characteristic.characteristic.valueHandle
        let start = clock.now
        let meter = ThroughputMeter(start: start, countsLoss: true)
        let limit = options.packetLimit
        // The receiver ends at the packet limit or the link's end.
        let (ends, end) = AsyncStream<ThroughputError?>.makeStream()
        let events = await host.events()
        let watcher = Task {
            for await event in events {
                if case .disconnected(handle, let reason) = event {
                    end.yield(.disconnected(reason))
                    return
                }
            }
        }
        await host.setNotificationHandler { connection, notification in
            guard connection == handle, notification.handle == valueHandle, !notification.isIndication else { return }
            meter.received(notification.value, at: clock.now)
            if let limit, meter.packets >= limit { end.yield(nil) }
        }
        defer { watcher.cancel() }
        let subscribe = GATTClientRequest.subscribe(
            characteristic.characteristic, indications: false, descriptorHandle: characteristic.clientConfigurationHandle)
        do {
            _ = try await perform(subscribe)
        } catch {
            await host.setNotificationHandler(nil)
            throw error
        }
        let receiver = Task { () -> ThroughputError? in
            for await failure in ends { return failure }
            return nil
        }
        let failure = await ThroughputClient.run(receiver, clock: clock, meter: meter, start: start, options: options, progress: progress)
        await host.setNotificationHandler(nil)
        if let failure { throw failure }
        // Stops the peer's stream; what it sent meanwhile is not counted.
        _ = try await perform(.unsubscribe(characteristic.characteristic, descriptorHandle: characteristic.clientConfigurationHandle))
        let state = meter.snapshot()
        return ThroughputReport(
            mode: .notify, mtu: mtu, payloadLength: state.largestPacket, elapsed: (state.lastPacket ?? clock.now) - start,
            packets: state.tracker.packets, octets: state.tracker.octets, lost: state.tracker.lost,
            outOfOrder: state.tracker.outOfOrder)
    }
}
