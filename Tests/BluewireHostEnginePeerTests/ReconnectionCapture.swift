import BluewireCore
import BluewireSnoop

/// What a btsnoop capture of a bonded reconnection shows, read back with `CaptureReader`: the SMP traffic
/// (ACL on the fixed channel 0x0006, Core Vol 3 Part A §2.1) and the link-layer encryption procedure's HCI
/// commands and events (Core Vol 4 Part E §7.8.24, §7.8.25, §7.7.8, §7.7.65.5). A bonded reconnection
/// encrypts with the stored LTK: encryption commands and events, no SMP PDU at all (Vol 3 Part H §2.4.4).
struct ReconnectionCapture: Equatable {
    /// ACL start fragments whose L2CAP basic header names CID 0x0006, either direction.
    var smpPackets = 0
    /// HCI_LE_Enable_Encryption commands (opcode 0x2019).
    var enableEncryption = 0
    /// HCI_LE_Long_Term_Key_Request events (LE Meta subevent 0x05).
    var longTermKeyRequests = 0
    /// HCI_LE_Long_Term_Key_Request_Reply commands (0x201A).
    var longTermKeyReplies = 0
    /// HCI_LE_Long_Term_Key_Request_Negative_Reply commands (0x201B).
    var longTermKeyNegativeReplies = 0
    /// Encryption Change (v1 0x08 or v2 0x59) events with status success and encryption on.
    var encryptionChangedOn = 0
    /// Records the reader could not turn into a packet, plus a reading error if any.
    var unreadable = 0

    init(_ capture: [UInt8]) {
        let (records, error) = CaptureReader.readAll(capture)
        if error != nil { unreadable += 1 }
        for record in records {
            guard let packet = record.packet else { unreadable += 1; continue }
            let bytes = Array(packet.payload)
            switch packet.type {
            case .acl:
                // Handle/PB/BC (2), length (2), then the L2CAP basic header: length (2), CID (2).
                guard bytes.count >= 8, (bytes[1] >> 4) & 0b11 != 0b01 else { continue }
                if UInt16(bytes[6]) | UInt16(bytes[7]) << 8 == 0x0006 { smpPackets += 1 }
            case .command:
                guard bytes.count >= 2 else { continue }
                switch UInt16(bytes[0]) | UInt16(bytes[1]) << 8 {
                case 0x2019: enableEncryption += 1
                case 0x201A: longTermKeyReplies += 1
                case 0x201B: longTermKeyNegativeReplies += 1
                default: break
                }
            case .event:
                guard bytes.count >= 3 else { continue }
                switch bytes[0] {
                case 0x08, 0x59:
                    if bytes.count >= 6, bytes[2] == 0, bytes[5] != 0 { encryptionChangedOn += 1 }
                case 0x3E:
                    if bytes[2] == 0x05 { longTermKeyRequests += 1 }
                default: break
                }
            default:
                break
            }
        }
    }
}
