import BluewireCore
import BluewireHCI
import BluewireTesting
import PeerTestSupport
import Testing

/// Packets with the virtual time at which a host received them.
final class TimedLog: Sendable {
    private let recorder = SendableRecorder<(Int64, String)>()
    func append(_ time: MonotonicInstant, _ packet: HCIPacket) { recorder.append((time.microseconds, packet.hex)) }
    var entries: [(Int64, String)] { recorder.values }
    func times(matching prefix: String) -> [Int64] { entries.filter { $0.1.hasPrefix(prefix) }.map(\.0) }
}

extension AdvertisingScene {
    /// Routes both hosts' output into timed logs.
    func logOutput() -> (central: TimedLog, peripheral: TimedLog) {
        let logs = (central: TimedLog(), peripheral: TimedLog())
        let clock = link.clock
        central.setOutputHandler { logs.central.append(clock.monotonicNow, $0) }
        peripheral.setOutputHandler { logs.peripheral.append(clock.monotonicNow, $0) }
        return logs
    }

    /// Raises the data length to 251 both ways and moves to `interval` (1.25 ms units) and `phy`.
    func tune(interval: UInt16, phy: LEPHYSet?) {
        central.receive(hostPacket: HCICommand.leSetDataLength(LESetDataLength(connectionHandle: 0x40)).packet)
        peripheral.receive(hostPacket: HCICommand.leSetDataLength(LESetDataLength(connectionHandle: 0x40)).packet)
        central.receive(hostPacket: HCICommand.leConnectionUpdate(LEConnectionUpdate(connectionHandle: 0x40, connection: LEConnectionParameters(
            connectionIntervalMin: interval, connectionIntervalMax: interval))).packet)
        if let phy {
            central.receive(hostPacket: HCICommand.leSetPHY(LESetPHY(connectionHandle: 0x40, txPHYs: phy, rxPHYs: phy)).packet)
        }
        link.clock.advance(by: .seconds(1))
    }

    /// Acts as a host that keeps the central's LE buffers full of `frameLength`-octet frames for `duration`
    /// of virtual time, stepping the clock deadline by deadline; returns the frames the peripheral's
    /// host received completely.
    func measureThroughput(frameLength: Int, buffers: Int, duration: TimeSpan) -> Int {
        var credits = buffers
        var receivedOctets = 0
        let clock = link.clock
        let end = clock.monotonicNow + duration
        let frame = l2capFrame(payload: frameLength - 4)
        _ = central.takeOutput()
        _ = peripheral.takeOutput()
        while clock.monotonicNow < end {
            while credits > 0 {
                central.receive(hostPacket: aclPacket(frame))
                credits -= 1
            }
            guard clock.advanceToNextDeadline() else { break }
            for packet in central.takeOutput() where packet.payload.first == 0x13 {
                let bytes = Array(packet.payload)
                credits += Int(bytes[5]) | Int(bytes[6]) << 8
            }
            for packet in peripheral.takeOutput() where packet.type == .acl {
                receivedOctets += packet.payload.count - 4
            }
        }
        return receivedOctets / frameLength
    }
}

@Suite("VirtualLink radio timing")
struct VirtualControllerTimingTests {
    @Test("connections complete at the advertiser's next advertising event, on both sides at the same instant")
    func connectionAtNextAdvertisingEvent() {
        let scene = AdvertisingScene(timing: .radio())
        scene.advertiseLegacy()
        let logs = scene.logOutput()
        scene.central.receive(hostPacket: HCICommand.leCreateConnection(LECreateConnection(peerAddress: VirtualAddress.peripheralRandom)).packet)
        scene.link.clock.advance(by: .milliseconds(99))
        #expect(logs.central.times(matching: "04 3e 13 01").isEmpty)
        scene.link.clock.advance(by: .milliseconds(1))
        // Advertising started at 0 with a 100 ms interval: the next advertising event is at 100 ms.
        #expect(logs.central.times(matching: "04 3e 13 01") == [100_000])
        #expect(logs.peripheral.times(matching: "04 3e 13 01") == [100_000])
    }

    @Test("with two exchanges per connection event, six packets take three events, 30 ms apart")
    func exchangesPerConnectionEvent() {
        let scene = AdvertisingScene(timing: .radio(maxExchangesPerConnectionEvent: 2))
        scene.connectLegacy()
        scene.link.clock.advance(by: .milliseconds(100))
        let logs = scene.logOutput()
        for _ in 0..<6 { scene.central.receive(hostPacket: aclPacket(l2capFrame(payload: 0))) }
        scene.link.clock.advance(by: .milliseconds(100))
        // Connected at 100 ms; events every 30 ms from 101.25 ms. An exchange of a 4-octet PDU and an
        // empty one on LE 1M takes 112 + 150 + 80 + 150 = 492 µs.
        let expected: [Int64] = [101_742, 102_234, 131_742, 132_234, 161_742, 162_234]
        #expect(logs.peripheral.times(matching: "02 40 20") == expected)
        #expect(logs.central.times(matching: nocpEvent(1)) == expected)
    }

    @Test("NOCP can be reported once per connection event instead of per packet")
    func completedPacketsPerEvent() {
        let scene = AdvertisingScene(timing: .radio(maxExchangesPerConnectionEvent: 2, completedPacketsReporting: .atEndOfConnectionEvent))
        scene.connectLegacy()
        scene.link.clock.advance(by: .milliseconds(100))
        _ = scene.central.takeOutput()
        let logs = scene.logOutput()
        for _ in 0..<5 { scene.central.receive(hostPacket: aclPacket(l2capFrame(payload: 0))) }
        scene.link.clock.advance(by: .milliseconds(100))
        #expect(logs.central.entries.map(\.1) == [nocpEvent(2), nocpEvent(2), nocpEvent(1)])
        #expect(logs.central.entries.map(\.0) == [102_234, 132_234, 161_742])
    }

    @Test("on LE 2M the same exchange takes 60 + 150 + 44 + 150 µs")
    func phyRateChangesAirTime() {
        let scene = AdvertisingScene(timing: .radio())
        scene.connectLegacy()
        scene.link.clock.advance(by: .milliseconds(100))
        scene.central.receive(hostPacket: HCICommand.leSetPHY(LESetPHY(connectionHandle: 0x40, txPHYs: .le2M, rxPHYs: .le2M)).packet)
        scene.link.clock.advance(by: .milliseconds(100))
        let logs = scene.logOutput()
        let start = scene.link.clock.monotonicNow.microseconds
        for _ in 0..<2 { scene.central.receive(hostPacket: aclPacket(l2capFrame(payload: 0))) }
        scene.link.clock.advance(by: .milliseconds(100))
        let times = logs.peripheral.times(matching: "02 40 20")
        #expect(times.count == 2)
        if times.count == 2 {
            #expect(times[1] - times[0] == 404)
            #expect(times[0] > start)
        }
    }

    @Test("control procedures ride in the next connection event; Disconnect completes there too")
    func proceduresTakeAConnectionEvent() {
        let scene = AdvertisingScene(timing: .radio())
        scene.connectLegacy()
        let logs = scene.logOutput()
        scene.link.clock.advance(by: .milliseconds(100))
        scene.central.receive(hostPacket: HCICommand.leSetDataLength(LESetDataLength(connectionHandle: 0x40)).packet)
        scene.link.clock.advance(by: .milliseconds(100))
        // Connected and command sent at 100 ms; the first anchor is at 101.25 ms; two 9-octet control
        // PDUs on 1M take 152 + 150 + 152 + 150 µs.
        #expect(logs.central.times(matching: "04 3e 0b 07") == [101_854])
        #expect(logs.peripheral.times(matching: "04 3e 0b 07") == [101_854])
        scene.peripheral.receive(hostPacket: HCICommand.disconnect(Disconnect(connectionHandle: 0x40)).packet)
        scene.link.clock.advance(by: .milliseconds(100))
        // Sent at 200 ms: the next anchor of the 30 ms grid is 221.25 ms.
        #expect(logs.peripheral.times(matching: "04 05 04 00 40 00 16") == [221_854])
        #expect(logs.central.times(matching: "04 05 04 00 40 00 13") == [221_854])
    }

    @Test("scanners only hear advertising events inside their scan window")
    func scanWindow() {
        for (delay, expectedReports) in [(Int64(0), 11), (60, 0)] {
            let scene = AdvertisingScene(timing: .radio())
            // Interval 100 ms, window 50 ms.
            expectCommandComplete(scene.central, .leSetScanParameters(LESetScanParameters(active: false, scanInterval: 0xA0, scanWindow: 0x50, ownAddressType: 0x01)))
            expectCommandComplete(scene.central, .leSetScanEnable(LESetScanEnable(enable: true)))
            scene.link.clock.advance(by: .milliseconds(delay))
            scene.advertiseLegacy()
            scene.link.clock.advance(to: MonotonicInstant(microseconds: 1_000_000))
            #expect(scene.central.takeOutput().count == expectedReports, "advertising from \(delay) ms")
        }
    }

    @Test("throughput over the modelled radio approaches the physical limits of LE 1M and 2M")
    func throughputNearPhysicalLimits() {
        // 244-octet notifications in 251-octet link-layer PDUs: 790.9 kbit/s on 1M, 1,402.3 kbit/s on 2M
        // with back-to-back exchanges; connection-interval boundaries cost a little.
        for (phy, interval, limit) in [(LEPHYSet?.none, UInt16(6), 790.9), (.le2M, 40, 1_402.3)] {
            let scene = AdvertisingScene.connected(timing: .radio())
            scene.tune(interval: interval, phy: phy)
            let frames = scene.measureThroughput(frameLength: 251, buffers: 8, duration: .seconds(1))
            let kbps = Double(frames * 244 * 8) / 1_000
            #expect(kbps <= limit, "\(kbps) kbit/s")
            #expect(kbps >= limit * 0.97, "\(kbps) kbit/s")
        }
    }

    @Test("without data length extension 27-octet PDUs carry 20 octets of ATT payload: about 236.7 kbit/s on 1M")
    func throughputWithoutDataLengthExtension() {
        let scene = AdvertisingScene.connected(timing: .radio())
        scene.central.receive(hostPacket: HCICommand.leConnectionUpdate(LEConnectionUpdate(connectionHandle: 0x40, connection: LEConnectionParameters(
            connectionIntervalMin: 6, connectionIntervalMax: 6))).packet)
        scene.link.clock.advance(by: .seconds(1))
        let frames = scene.measureThroughput(frameLength: 27, buffers: 8, duration: .seconds(1))
        let kbps = Double(frames * 20 * 8) / 1_000
        #expect(kbps <= 236.7 && kbps >= 236.7 * 0.97, "\(kbps) kbit/s")
    }
}

@Suite("VirtualLink determinism")
struct VirtualControllerDeterminismTests {
    /// Two hosts' worth of traffic: advertise, scan, connect, exchange data, update, disconnect.
    static func scenario(timing: VirtualLink.Timing) -> [String] {
        let scene = AdvertisingScene(timing: timing)
        let logs = scene.logOutput()
        for command: HCICommand in [
            .leSetAdvertisingParameters(LESetAdvertisingParameters(ownAddressType: 0x01)),
            .leSetAdvertisingData(LESetAdvertisingData(advertisingData: AdvertisingScene.advertisingData)),
            .leSetAdvertisingEnable(LESetAdvertisingEnable(enable: true)),
        ] {
            scene.peripheral.receive(hostPacket: command.packet)
        }
        scene.central.receive(hostPacket: HCICommand.leSetScanParameters(LESetScanParameters(active: true, ownAddressType: 0x01)).packet)
        scene.central.receive(hostPacket: HCICommand.leSetScanEnable(LESetScanEnable(enable: true)).packet)
        scene.link.clock.advance(by: .milliseconds(350))
        scene.central.receive(hostPacket: HCICommand.leSetScanEnable(LESetScanEnable(enable: false)).packet)
        scene.central.receive(hostPacket: HCICommand.leCreateConnection(LECreateConnection(peerAddress: VirtualAddress.peripheralRandom)).packet)
        scene.link.clock.advance(by: .milliseconds(200))
        for size in [3, 60, 200] {
            scene.central.receive(hostPacket: aclPacket(l2capFrame(payload: size)))
            scene.peripheral.receive(hostPacket: aclPacket(l2capFrame(payload: size / 2)))
        }
        scene.central.receive(hostPacket: HCICommand.leSetPHY(LESetPHY(connectionHandle: 0x40, txPHYs: .le2M, rxPHYs: .le2M)).packet)
        scene.link.clock.advance(by: .milliseconds(200))
        scene.central.receive(hostPacket: HCICommand.disconnect(Disconnect(connectionHandle: 0x40)).packet)
        scene.link.clock.advance(by: .milliseconds(200))
        return logs.central.entries.map { "C \($0.0) \($0.1)" } + logs.peripheral.entries.map { "P \($0.0) \($0.1)" }
    }

    @Test("the same inputs produce the same packets at the same virtual times", arguments: [VirtualLink.Timing.immediate, .radio()])
    func sameInputsSameOutputs(timing: VirtualLink.Timing) {
        let first = Self.scenario(timing: timing)
        let second = Self.scenario(timing: timing)
        #expect(first.count > 20)
        #expect(first == second)
        #expect(first.contains { $0.hasPrefix("P") && $0.contains(" 02 40 20 ") }, "data reached the peripheral")
        #expect(first.contains { $0.hasSuffix("04 05 04 00 40 00 16") }, "disconnected")
    }
}
