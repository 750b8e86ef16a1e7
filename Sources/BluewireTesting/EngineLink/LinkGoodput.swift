import BluewireCore
import BluewireGATT
import BluewireHCI
import BluewireHostEngine
import BluewireL2CAP

/// The ceiling the virtual link's radio model puts on L2CAP payload, from the same timing the link
/// runs on (`VirtualLink.Timing.airTime`, Core Vol 6 Part B §2.1, §4.1.1, §4.5.1):
///
/// - one exchange is a full data PDU one way and an empty PDU back, each followed by T_IFS:
///   `T_x = airTime(P) + T_IFS + airTime(0) + T_IFS`; on LE 2M with P = 251 unencrypted (no MIC):
///   (2 preamble + 4 access address + 2 header + 251 + 3 CRC) × 4 µs = 1,048 µs, the empty PDU
///   (2 + 4 + 2 + 0 + 3) × 4 µs = 44 µs, so T_x = 1,048 + 150 + 44 + 150 = 1,392 µs;
/// - a connection event holds `N = ⌊interval / T_x⌋` exchanges (the next must end before the next anchor);
/// - every data PDU carries a 4-octet basic L2CAP header, so at most `P − 4` octets of channel payload
///   (a K-frame's information payload with MPS = P − 4, or an ATT PDU).
///
/// Limit = N × (P − 4) × 8 bit / interval. For a 30 ms interval: N = 21, 21 × 247 × 8 / 30 ms =
/// 1,383.2 kbit/s (back to back, with no event boundary: 247 × 8 / 1,392 µs = 1,419.5 kbit/s). SDU
/// goodput stays below it by the 2-octet SDU Length of each first K-frame; notifications by the
/// 3-octet ATT header of each.
public struct LinkPayloadLimit: Hashable, Sendable {
    /// Connection interval in 1.25 ms units.
    public var interval: UInt16
    /// PHY as HCI numbers it (0x01 1M, 0x02 2M, 0x03 Coded).
    public var phy: UInt8
    /// Link-layer payload per data PDU (connEffectiveMaxTxOctets).
    public var pduPayload: Int
    public var interFrameSpace: TimeSpan

    public init(interval: UInt16, phy: UInt8 = 0x02, pduPayload: Int = 251, interFrameSpace: TimeSpan = .microseconds(150)) {
        self.interval = interval
        self.phy = phy
        self.pduPayload = pduPayload
        self.interFrameSpace = interFrameSpace
    }

    public var intervalMicroseconds: Int64 { Int64(interval) * 1_250 }
    /// T_x: a full PDU, T_IFS, an empty PDU, T_IFS.
    public var exchangeMicroseconds: Int64 {
        (VirtualLink.Timing.airTime(payload: pduPayload, phy: phy) + interFrameSpace
            + VirtualLink.Timing.airTime(payload: 0, phy: phy) + interFrameSpace).microseconds
    }
    /// N: exchanges per connection event.
    public var exchangesPerEvent: Int64 { max(1, intervalMicroseconds / exchangeMicroseconds) }
    /// Octets of L2CAP channel payload per PDU (the basic header takes 4).
    public var payloadPerPDU: Int { pduPayload - 4 }
    /// The limit, in kbit/s.
    public var kilobitsPerSecond: Double {
        Double(exchangesPerEvent * Int64(payloadPerPDU) * 8) * 1_000 / Double(intervalMicroseconds)
    }
    /// The same with no connection-event boundary (exchanges back to back), in kbit/s.
    public var backToBackKilobitsPerSecond: Double { Double(payloadPerPDU * 8) * 1_000 / Double(exchangeMicroseconds) }
}

/// Payload received over a measured stretch of virtual time.
public struct GoodputMeasurement: Hashable, Sendable {
    public var octets: Int
    public var units: Int
    public var span: TimeSpan
    public var kilobitsPerSecond: Double { Double(octets * 8) * 1_000 / Double(span.microseconds) }
}

/// Two engines on a virtual link with radio timing, tuned as a throughput test tunes a link (LE 2M
/// both ways, 251-octet PDUs both ways, a fixed interval), streaming from the peripheral to the
/// central either SDUs on an LE credit based channel or GATT notifications; goodput is what the
/// central's host received, counted over virtual time, so it is the same on every run and machine.
///
/// Link settings the engines have no request for are made around them: both controllers suggest
/// 251-octet PDUs (as after LE Write Suggested Default Data Length), so the data length update runs
/// at connection in both directions, and LE Set PHY (2M both ways) is injected on the central.
public enum LinkGoodput {
    public static let spsm = SPSM(0x0080)

    /// Brings up two engines, connects them at `interval`, and raises the link to 2M and 251 octets.
    public static func connectedScene(
        interval: UInt16, preferredMTU: UInt16 = 247, recordsPackets: Bool = false
    ) throws(EngineLinkError) -> (scene: EnginesOnVirtualLink, handle: UInt16) {
        var scene = try EnginesOnVirtualLink(timing: .radio(), preferredMTU: preferredMTU, recordsPackets: recordsPackets) {
            $0.suggestedMaxTxOctets = 251
        }
        let handle = try scene.connect(LEConnectionParameters(
            connectionIntervalMin: interval, connectionIntervalMax: interval, supervisionTimeout: 0x0C80))
        scene.inject(.leSetPHY(LESetPHY(connectionHandle: handle, txPHYs: .le2M, rxPHYs: .le2M)), on: 0)
        scene.run(for: .milliseconds(500))
        guard let info = scene.link.connections.first, info.centralToPeripheralPHY == PHY.le2M,
              info.peripheralToCentralPHY == PHY.le2M, info.centralToPeripheralOctets == 251,
              info.peripheralToCentralOctets == 251, info.interval == interval
        else { throw .setupFailed("link not at 2M / 251 octets: \(String(describing: scene.link.connections.first))") }
        _ = scene.stations[0].takeEvents()
        _ = scene.stations[1].takeEvents()
        return (scene, handle)
    }

    /// SDUs of `sduLength` octets on an LE credit based channel the central opens with `mtu`, MPS
    /// `mps` and `credits` initial credits; the peripheral keeps two SDUs queued on it.
    public static func channel(
        interval: UInt16, mtu: Int, mps: Int = 247, credits: Int, sduLength: Int,
        warmUp: TimeSpan = .milliseconds(500), measure span: TimeSpan = .seconds(2)
    ) throws(EngineLinkError) -> GoodputMeasurement {
        var (scene, handle) = try connectedScene(interval: interval)
        scene.perform(.registerServer(
            spsm: spsm, parameters: CreditBasedChannelParameters(mtu: mtu, mps: mps, initialCredits: credits), security: .none), on: 1)
        let open = scene.perform(.openChannel(
            connection: handle, spsm: spsm, parameters: CreditBasedChannelParameters(mtu: mtu, mps: mps, initialCredits: credits)), on: 0)
        try scene.run(until: { $0.central.result(open) != nil }, within: .seconds(2))
        guard case .success(.channelOpened(let channel))? = scene.central.result(open) else {
            throw .setupFailed("channel: \(String(describing: scene.central.result(open)))")
        }
        let sdu = (0..<sduLength).map { UInt8(truncatingIfNeeded: $0) }
        let sender = channel.remoteCID
        func feed(_ scene: inout EnginesOnVirtualLink) {
            while let backlog = scene.peripheral.engine.channelBacklog(connection: handle, cid: sender), backlog.queuedSDUs < 2 {
                scene.perform(.sendSDU(connection: handle, cid: sender, sdu), on: 1)
            }
            scene.peripheral.completions.removeAll(keepingCapacity: true)
        }
        return measure(&scene, warmUp: warmUp, span: span, feed: feed) { event in
            guard case .channelSDU(_, channel.cid, let received) = event else { return nil }
            return received.count
        }
    }

    /// Notifications of ATT_MTU − 3 octets at ATT_MTU `mtu` (both engines prefer it; the central
    /// exchanges MTU and subscribes); the peripheral keeps its ACL queue topped up.
    public static func notifications(
        interval: UInt16, mtu: UInt16, warmUp: TimeSpan = .milliseconds(500), measure span: TimeSpan = .seconds(2)
    ) throws(EngineLinkError) -> GoodputMeasurement {
        var (scene, handle) = try connectedScene(interval: interval, preferredMTU: mtu)
        var builder = GATTDatabaseBuilder()
        let handles: GATTCharacteristicHandles
        do {
            try builder.addService(BluetoothUUID(0xFFF0))
            handles = try builder.addCharacteristic(
                BluetoothUUID(0xFFF1), properties: [.notify], permissions: [.read], value: .cached([0]))
        } catch {
            throw .setupFailed("database: \(error)")
        }
        scene.peripheral.engine.setDatabase(builder.build())
        let exchange = scene.perform(.gatt(connection: handle, .exchangeMTU), on: 0)
        guard let cccd = handles.clientConfigurationHandle else { throw .setupFailed("no CCCD") }
        // The database is this measurement's own: its handles are known without a discovery.
        scene.perform(.gatt(connection: handle, .cachedDiscovery), on: 0)
        let subscribe = scene.perform(.gatt(connection: handle, .write(handle: cccd, value: [0x01, 0x00])), on: 0)
        try scene.run(until: { $0.central.result(exchange) != nil && $0.central.result(subscribe) != nil }, within: .seconds(2))
        guard scene.central.result(subscribe) == .success(.done), scene.central.engine.mtu(connection: handle) == Int(mtu) else {
            throw .setupFailed("subscribe: \(String(describing: scene.central.result(subscribe))), MTU \(String(describing: scene.central.engine.mtu(connection: handle)))")
        }
        let value = (0..<Int(mtu) - 3).map { UInt8(truncatingIfNeeded: $0) }
        func feed(_ scene: inout EnginesOnVirtualLink) {
            while scene.peripheral.engine.queuedACLPackets(connection: handle) < 4 {
                scene.perform(.notify(valueHandle: handles.valueHandle, value: value, connection: handle), on: 1)
            }
            scene.peripheral.completions.removeAll(keepingCapacity: true)
        }
        return measure(&scene, warmUp: warmUp, span: span, feed: feed) { event in
            guard case .notification(_, handles.valueHandle, let received, false) = event else { return nil }
            return received.count
        }
    }

    /// Feeds the sender after every step; counts what the central received between the end of
    /// `warmUp` and `span` later.
    static func measure(
        _ scene: inout EnginesOnVirtualLink, warmUp: TimeSpan, span: TimeSpan,
        feed: (inout EnginesOnVirtualLink) -> Void, count: (HostEngineEvent) -> Int?
    ) -> GoodputMeasurement {
        feed(&scene)
        scene.run(for: warmUp) { scene in
            feed(&scene)
            _ = scene.stations[0].takeEvents()
        }
        var measurement = GoodputMeasurement(octets: 0, units: 0, span: span)
        scene.run(for: span) { scene in
            feed(&scene)
            for event in scene.stations[0].takeEvents() {
                guard let octets = count(event) else { continue }
                measurement.octets += octets
                measurement.units += 1
            }
        }
        return measurement
    }
}
