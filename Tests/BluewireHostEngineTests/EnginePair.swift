import BluewireCore
import BluewireHCI
import BluewireHostEngine
import Testing

/// Two engines on one virtual LE link, each behind a scripted controller with bumble's buffers
/// (27-octet ACL packets, 64 of them): what one host writes as ACL data the other receives as is
/// (same connection handle on both sides), and the sender gets Number Of Completed Packets back.
/// Deterministic: `shuttle` moves packets until both sides fall silent; no clock moves.
struct EnginePair {
    static let handle: UInt16 = 0x0040
    static let centralAddress = BluetoothAddress(value: 0xC4_5A_17_00_00_01, type: .random)
    static let peripheralAddress = BluetoothAddress(value: 0xC4_5A_17_00_00_02, type: .random)

    var central = EngineDriver()
    var peripheral = EngineDriver()
    /// ACL packets carried each way.
    var packetsToPeripheral = 0
    var packetsToCentral = 0

    /// Both engines up and connected, the central by a `.connect` request.
    init() throws {
        _ = try central.bringUpFromBumbleCapture()
        _ = try peripheral.bringUpFromBumbleCapture()
        central.perform(.connect(Self.peripheralAddress, LEConnectionParameters()))
        central.answerCommands()
        central.controller(ControllerBytes.leConnectionComplete(handle: Self.handle, central: true, peer: Self.peripheralAddress))
        peripheral.controller(ControllerBytes.leConnectionComplete(handle: Self.handle, central: false, peer: Self.centralAddress))
        central.answerCommands()
        _ = central.takeEvents()
        _ = peripheral.takeEvents()
    }

    /// Carries packets both ways until neither side writes anything more.
    mutating func shuttle(rounds limit: Int = 100_000) {
        for _ in 0..<limit {
            let fromCentral = central.takeWritten()
            let fromPeripheral = peripheral.takeWritten()
            if fromCentral.isEmpty && fromPeripheral.isEmpty { return }
            packetsToPeripheral += Self.deliver(fromCentral, from: &central, to: &peripheral)
            packetsToCentral += Self.deliver(fromPeripheral, from: &peripheral, to: &central)
        }
        Issue.record("the link never fell silent")
    }

    static func deliver(_ packets: [HCIPacket], from sender: inout EngineDriver, to receiver: inout EngineDriver) -> Int {
        var acl = 0
        for packet in packets {
            switch packet.type {
            case .acl:
                receiver.controller(packet)
                acl += 1
            case .command:
                if let answer = ControllerBytes.answer(packet) { sender.controller(answer) }
            default:
                break
            }
        }
        if acl > 0 { sender.controller(ControllerBytes.completedPackets(handle: handle, count: UInt16(acl))) }
        return acl
    }
}

extension EngineDriver {
    /// The SDUs received on `cid`, in order, taken out of the events.
    mutating func takeSDUs(cid: UInt16) -> [[UInt8]] {
        var sdus: [[UInt8]] = []
        events.removeAll { event in
            guard case .channelSDU(_, let on, let sdu) = event, on == cid else { return false }
            sdus.append(sdu)
            return true
        }
        return sdus
    }

    /// The channel opened by request `id`.
    func openedChannel(_ id: HostRequestID) -> HostChannel? {
        guard case .success(.channelOpened(let channel))? = result(id) else { return nil }
        return channel
    }

    /// The channels a peer opened (`.channelOpened` events with `initiatedLocally` false).
    var incomingChannels: [HostChannel] {
        events.compactMap { if case .channelOpened(let c) = $0, !c.initiatedLocally { return c }; return nil }
    }
}
