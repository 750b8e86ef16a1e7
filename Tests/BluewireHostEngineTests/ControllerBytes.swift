import BluewireCore
import BluewireHCI
import BluewireSnoop
import Foundation

/// Controller → host packets built byte by byte (Core Vol 4 Part E §7.7), for scripting the
/// parts of an exchange no capture holds. Values follow what bumble's controller sends.
enum ControllerBytes {
    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }

    static func event(_ code: UInt8, _ parameters: [UInt8]) -> HCIPacket {
        HCIPacket(type: .event, payload: [code, UInt8(parameters.count)] + parameters)
    }

    /// Command Complete (§7.7.14) with status 0x00 and no further return parameters.
    static func commandComplete(_ opcode: HCIOpcode, status: UInt8 = 0, returning rest: [UInt8] = []) -> HCIPacket {
        event(0x0E, [1] + le16(opcode.rawValue) + [status] + rest)
    }

    /// Command Status (§7.7.15).
    static func commandStatus(_ opcode: HCIOpcode, status: UInt8 = 0) -> HCIPacket {
        event(0x0F, [status, 1] + le16(opcode.rawValue))
    }

    /// The answer bumble's controller gives a command it does not treat specially.
    static func answer(_ command: HCIPacket) -> HCIPacket? {
        guard command.type == .command, command.payload.count >= 3 else { return nil }
        let opcode = HCIOpcode(rawValue: UInt16(command.payload[command.payload.startIndex]) | UInt16(command.payload[command.payload.startIndex + 1]) << 8)
        switch opcode {
        case .leCreateConnection, .leExtendedCreateConnection, .disconnect, .leConnectionUpdate:
            return commandStatus(opcode)
        default:
            return commandComplete(opcode)
        }
    }

    /// LE Connection Complete (§7.7.65.1).
    static func leConnectionComplete(
        handle: UInt16, central: Bool, peer: BluetoothAddress, status: UInt8 = 0, interval: UInt16 = 0x0018
    ) -> HCIPacket {
        var p: [UInt8] = [0x01, status] + le16(handle) + [central ? 0 : 1, peer.type == .random ? 1 : 0]
        var writer = ByteWriter(capacity: 6)
        writer.append(BluetoothAddress(value: peer.value, type: .public))
        p += writer.bytes.suffix(6)
        p += le16(interval) + le16(0) + le16(0x00C8) + [0x00]
        return event(0x3E, p)
    }

    /// Disconnection Complete (§7.7.5).
    static func disconnectionComplete(handle: UInt16, reason: UInt8) -> HCIPacket {
        event(0x05, [0] + le16(handle) + [reason])
    }

    /// Number Of Completed Packets (§7.7.19) for one handle.
    static func completedPackets(handle: UInt16, count: UInt16) -> HCIPacket {
        event(0x13, [1] + le16(handle) + le16(count))
    }

    /// LE Advertising Report (§7.7.65.2) with one ADV_IND report.
    static func advertisingReport(_ address: BluetoothAddress, data: [UInt8], rssi: Int8 = -40) -> HCIPacket {
        var writer = ByteWriter(capacity: 6)
        writer.append(BluetoothAddress(value: address.value, type: .public))
        var p: [UInt8] = [0x02, 1, 0x00, address.type == .random ? 1 : 0]
        p += writer.bytes.suffix(6)
        p += [UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]
        return event(0x3E, p)
    }

    /// One ACL packet carrying a whole L2CAP PDU on `channel` (Core Vol 3 Part A §3.1).
    static func l2cap(handle: UInt16, channel: UInt16, _ payload: [UInt8]) -> HCIPacket {
        let frame = le16(UInt16(payload.count)) + le16(channel) + payload
        return HCIPacket(type: .acl, payload: le16(handle | 0x2000) + le16(UInt16(frame.count)) + frame)
    }

    static func att(handle: UInt16, _ pdu: [UInt8]) -> HCIPacket { l2cap(handle: handle, channel: 0x0004, pdu) }

    /// The ATT payload of a host → controller ACL packet on channel 0x0004 (whole PDU in one fragment).
    static func attPayload(_ packet: HCIPacket) -> [UInt8]? {
        let bytes = Array(packet.payload)
        guard packet.type == .acl, bytes.count >= 8, bytes[6] == 0x04, bytes[7] == 0x00 else { return nil }
        return Array(bytes[8...])
    }

    /// The opcode of a host → controller command packet.
    static func opcode(_ packet: HCIPacket) -> HCIOpcode? {
        let bytes = Array(packet.payload)
        guard packet.type == .command, bytes.count >= 3 else { return nil }
        return HCIOpcode(rawValue: UInt16(bytes[0]) | UInt16(bytes[1]) << 8)
    }
}

/// The committed captures (repository `Captures/`).
enum Captures {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Captures")

    static func packets(_ name: String) throws -> [(PacketDirection, HCIPacket)] {
        let bytes = try [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))
        let (records, error) = CaptureReader.readAll(bytes)
        if let error { throw error }
        return records.compactMap { record in
            if case .packet(let packet) = record.content { return (record.direction, packet) }
            return nil
        }
    }
}
