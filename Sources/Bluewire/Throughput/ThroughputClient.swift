import BluewireCore
import BluewireGATT
import BluewireHCI

/// How to run a throughput measurement (`ThroughputClient.run`).
public struct ThroughputOptions: Sendable, Hashable {
    public var mode: ThroughputMode
    /// How long to measure, on the Host's clock.
    public var duration: TimeSpan
    /// The characteristic value handle to subscribe to (notify) or write (writes); nil finds the
    /// throughput service's stream or sink characteristic (`ThroughputProfile`) by discovery.
    public var valueHandle: UInt16?
    /// Octets per written packet, 4...`ThroughputProfile.maximumPayloadLength(mtu:)`; nil: that
    /// maximum. (Notifications are as long as the peer makes them.)
    public var payloadLength: Int?
    /// Stop after this many packets even if `duration` has not elapsed.
    public var packetLimit: Int?
    /// How often `progress` is called.
    public var progressInterval: TimeSpan
    /// Whether to exchange MTUs first (the Host offers its configuration's `preferredMTU`).
    public var exchangesMTU: Bool
    /// PHYs to ask for before measuring (e.g. `.le2M`); nil keeps the link's.
    public var phy: LEPHYSet?

    public init(
        mode: ThroughputMode, duration: TimeSpan = .seconds(10), valueHandle: UInt16? = nil, payloadLength: Int? = nil,
        packetLimit: Int? = nil, progressInterval: TimeSpan = .seconds(1), exchangesMTU: Bool = true, phy: LEPHYSet? = nil
    ) {
        self.phy = phy
        self.mode = mode
        self.duration = duration
        self.valueHandle = valueHandle
        self.payloadLength = payloadLength
        self.packetLimit = packetLimit
        self.progressInterval = progressInterval
        self.exchangesMTU = exchangesMTU
    }
}

/// The measuring side of a throughput run, on a connection where the local device is central
/// (`bluewire throughput`).
///
/// ```swift
/// let connection = try await host.connect(to: peer)
/// let report = try await ThroughputClient(connection: connection).run(ThroughputOptions(mode: .notify, duration: .seconds(3))) {
///     print("\($0.kilobitsPerSecond) kbit/s")
/// }
/// ```
///
/// - notify: subscribes, counts the notifications (lost and out-of-order ones by their sequence
///   numbers) until `duration` has passed, unsubscribes.
/// - write-without-response: resets the peer's sink (if it has Bluewire's sink report) and has the
///   host engine stream sequence-numbered Write Commands (`HostRequest.streamATT`): it keeps the
///   link's ACL queue topped up as the controller returns buffers, so nothing here runs per packet.
///   Then reads the sink report: what arrived, lost, out of order.
/// - write: the same with Write Requests, one at a time, timing each round trip.
///
/// Times come from the Host's clock, so on a `VirtualLink` with radio timing the figures are in
/// virtual time and follow the link's model.
public struct ThroughputClient: Sendable {
    public let connection: Connection

    public init(connection: Connection) {
        self.connection = connection
    }

    /// Runs one measurement and returns its report. `progress` is called about every
    /// `options.progressInterval` while it runs (from another task: it must not block).
    public func run(
        _ options: ThroughputOptions, progress: @escaping @Sendable (ThroughputProgress) -> Void = { _ in }
    ) async throws(ThroughputError) -> ThroughputReport {
        if options.mode == .l2cap { throw .notGATT(.l2cap) }
        let gatt = await connection.gatt
        if options.exchangesMTU {
            do { _ = try await gatt.exchangeMTU() } catch { throw Self.map(error) }
        }
        let mtu = await gatt.mtu
        let (characteristic, report) = try await locate(options, gatt)
        var phy = if let phys = options.phy { await requestPHY(phys) } else { Optional<(tx: UInt8, rx: UInt8)>.none }
        let phyRequestFailed = options.phy != nil && phy == nil
        // The report always says which PHY the run used: the one asked for, or the link's.
        if phy == nil { phy = await readPHY() }
        var result: ThroughputReport
        switch options.mode {
        case .notify:
            result = try await measureNotifications(characteristic, options, gatt, mtu: mtu, progress: progress)
        case .l2cap:
            throw .notGATT(.l2cap)
        case .write, .writeWithoutResponse:
            let maximum = ThroughputProfile.maximumPayloadLength(mtu: mtu)
            let length = options.payloadLength ?? maximum
            guard length >= ThroughputProfile.sequenceLength, length <= maximum else { throw .payloadLength(length, maximum: maximum) }
            let link = ThroughputClientLink(connection: connection, gatt: gatt)
            result = try await link.measureWrites(characteristic.valueHandle, report: report?.valueHandle, length: length, options,
                                                  mtu: mtu, progress: progress)
        }
        result.phy = phy.map { ThroughputReport.PHYs(tx: $0.tx, rx: $0.rx) }
        result.phyRequestFailed = phyRequestFailed
        return result
    }

    /// The characteristic to measure with, and the sink report in the same service, if any.
    func locate(_ options: ThroughputOptions, _ gatt: GATTClient) async throws(ThroughputError) -> (GATTCharacteristic, GATTCharacteristic?) {
        let services: [GATTDiscoveredService]
        do { services = try await gatt.discoverAll() } catch { throw Self.map(error) }
        let needed = try options.requiredProperties()
        for service in services {
            for item in service.characteristics {
                guard try options.selects(item.characteristic, needing: needed) else { continue }
                let report = service.characteristics.first { $0.characteristic.uuid == ThroughputProfile.sinkReport }
                return (item.characteristic, report?.characteristic)
            }
        }
        throw .characteristicNotFound(handle: options.valueHandle, mode: options.mode)
    }

    // MARK: Notify

    func measureNotifications(
        _ characteristic: GATTCharacteristic, _ options: ThroughputOptions, _ gatt: GATTClient, mtu: Int,
        progress: @escaping @Sendable (ThroughputProgress) -> Void
    ) async throws(ThroughputError) -> ThroughputReport {
        // The run starts before the subscription: the peer streams as soon as it has the CCCD write,
        // and notifications it sends before the write response is processed are counted, so a start
        // taken after subscribing would count them over too short a time (a rate above the PHY's limit
        // when the client is slow). The cost is one CCCD round trip in the elapsed time.
        let clock = connection.host.clock
        let start = clock.now
        let subscription: CharacteristicSubscription
        do { subscription = try await gatt.subscribe(to: characteristic) } catch { throw Self.map(error) }
        let meter = ThroughputMeter(start: start, countsLoss: true)
        let limit = options.packetLimit
        let receiver = Task { () -> GATTError? in
            do throws(GATTError) {
                for try await notification in subscription {
                    meter.received(notification.value, at: clock.now)
                    if let limit, meter.packets >= limit { break }
                }
            } catch {
                return error
            }
            return nil
        }
        let failure = await Self.run(receiver, clock: clock, meter: meter, start: start, options: options, progress: progress)
        if let failure { throw Self.map(failure) }
        // Stops the peer's stream; what it sent meanwhile is not counted.
        do { try await gatt.unsubscribe(subscription) } catch { throw Self.map(error) }
        let state = meter.snapshot()
        return ThroughputReport(
            mode: .notify, mtu: mtu, payloadLength: state.largestPacket, elapsed: (state.lastPacket ?? clock.now) - start,
            packets: state.tracker.packets, octets: state.tracker.octets, lost: state.tracker.lost,
            outOfOrder: state.tracker.outOfOrder)
    }

    // MARK: Helpers

    /// Sleeps until the run's end on the Host's clock, calling `progress` every interval (after
    /// `catchUp`, see `tick`). Waits for `receiver` (which feeds `meter`) while progress is reported;
    /// when the run's time is up, `atDeadline` ends it (by default it cancels the receiver). Returns how
    /// the receiver failed, if it did. Cancelling the caller cancels the receiver.
    static func run<Failure: Error>(
        _ receiver: Task<Failure?, Never>, clock: any HostClock, meter: ThroughputMeter, start: MonotonicInstant,
        options: ThroughputOptions, progress: @escaping @Sendable (ThroughputProgress) -> Void,
        catchUp: @escaping @Sendable () async -> Void = {}, atDeadline: (@Sendable () async -> Void)? = nil
    ) async -> Failure? {
        let ticker = Task {
            await tick(clock: clock, meter: meter, start: start, options: options, progress: progress, catchUp: catchUp)
            if let atDeadline { await atDeadline() } else { receiver.cancel() }
        }
        let failure = await withTaskCancellationHandler {
            await receiver.value
        } onCancel: {
            receiver.cancel()
        }
        ticker.cancel()
        return failure
    }

    /// Sleeps until the run's end on `clock`, calling `progress` every interval; `catchUp` runs before
    /// each progress call (a stream the engine runs: the meter reads how far it got).
    static func tick(
        clock: any HostClock, meter: ThroughputMeter, start: MonotonicInstant, options: ThroughputOptions,
        progress: @Sendable (ThroughputProgress) -> Void, catchUp: @Sendable () async -> Void = {}
    ) async {
        let deadline = start + options.duration
        let interval = options.progressInterval
        var next = start + interval
        while !Task.isCancelled {
            let wake = interval.microseconds > 0 ? Swift.min(next, deadline) : deadline
            do { try await clock.sleep(until: wake) } catch { return }
            if wake >= deadline { return }
            await catchUp()
            progress(meter.progress(at: clock.now))
            next = next + interval
        }
    }

    static func map(_ error: GATTError) -> ThroughputError {
        if case .disconnected(let reason) = error { return .disconnected(reason) }
        return .gatt(error)
    }

    static func map(_ error: ConnectionError) -> ThroughputError {
        if case .disconnected(let reason) = error { return .disconnected(reason) }
        return .connection(error)
    }
}
