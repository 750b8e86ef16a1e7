import BluewireCore
import BluewireSnoop
import BluewireTransport
import Synchronization

/// Where a `ReplayScript` reads a capture's HCI packets, in capture order: a list in memory, or a capture
/// file read record by record as the replay goes (so a replay holds only the records between the
/// oldest packet not yet released and the farthest one the host has matched, whatever the file's size).
public enum ReplayPacketCursor: Sendable {
    case memory([ReplayPacket], next: Int)
    case file(ReplayCaptureFile)

    /// The next HCI packet (notes and other non-HCI records are skipped), or nil at the end.
    mutating func next() -> ReplayPacket? {
        switch self {
        case .memory(let packets, let next):
            guard next < packets.count else { return nil }
            self = .memory(packets, next: next + 1)
            return packets[next]
        case .file(let file):
            return file.next()
        }
    }

    /// A new cursor at the start of the same capture: a second reading position that looks ahead
    /// without holding what it passes (the next host packet's capture time, the packets never sent).
    func restarted() -> ReplayPacketCursor? {
        switch self {
        case .memory(let packets, _): .memory(packets, next: 0)
        case .file(let file): (try? ReplayCaptureFile(path: file.path)).map { .file($0) }
        }
    }
}

/// A capture file read one HCI packet at a time, each packet copied out of the reader's chunk so that
/// a packet the replay keeps does not keep a whole chunk alive.
public final class ReplayCaptureFile: Sendable {
    public let path: String
    let reader: Mutex<CaptureFileReader>
    /// A read error after the capture was checked whole (the file changed during the replay): the
    /// capture ends there.
    let failure = Mutex<CaptureFileError?>(nil)

    public init(path: String) throws(CaptureFileError) {
        self.path = path
        reader = Mutex(try CaptureFileReader(path: path))
    }

    /// Reads the whole file once, holding one record at a time: a capture that ends inside a record,
    /// or cannot be read, fails here, before the replay starts (as reading it whole did).
    public static func check(path: String) throws(CaptureFileError) {
        let reader = try CaptureFileReader(path: path)
        while try reader.next() != nil {}
    }

    func next() -> ReplayPacket? {
        reader.withLock { reader in
            do throws(CaptureFileError) {
                while let record = try reader.next() {
                    guard let packet = record.packet else { continue }
                    return ReplayPacket(
                        recordIndex: record.index, direction: record.direction,
                        packet: HCIPacket(type: packet.type, payload: Array(packet.payload)), timestamp: record.timestamp)
                }
            } catch {
                failure.withLock { $0 = error }
            }
            return nil
        }
    }
}

extension ReplayPacket {
    /// Every HCI packet of a whole capture file's bytes; a capture that ends inside a record is an error.
    public static func all(captureBytes: [UInt8]) throws(CaptureError) -> [ReplayPacket] {
        let (records, error) = CaptureReader.readAll(captureBytes)
        if let error { throw error }
        return all(records: records)
    }

    /// The HCI packets among `records` (notes and other non-HCI records are skipped).
    public static func all(records: some Sequence<CaptureRecord>) -> [ReplayPacket] {
        var packets: [ReplayPacket] = []
        for record in records {
            guard let packet = record.packet else { continue }
            packets.append(ReplayPacket(
                recordIndex: record.index, direction: record.direction, packet: packet, timestamp: record.timestamp))
        }
        return packets
    }
}
