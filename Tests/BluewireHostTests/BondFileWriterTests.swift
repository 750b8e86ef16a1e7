import Bluewire
import BluewireTesting
import Foundation
import Synchronization
import Testing

/// `BondFileWriter`: bonds saved on a thread of its own, so that a save of a large store holds up no
/// link, and `PrivateFile`'s atomic replacement (a symbolic link kept, errors in words).
@Suite("Bond file writer", .timeLimit(.minutes(1)))
struct BondFileWriterTests {
    static let centralAddress = BluetoothAddress.randomStatic(0x0A0B_0C0D_1F01)
    static let peripheralAddress = BluetoothAddress.randomStatic(0x0A0B_0C0D_1F02)

    /// `count` bonds with distinct peers, as an unlimited store filled by a central rotating its address.
    static func bonds(_ count: Int) -> [HostBond] {
        (0..<count).map { index in
            var bond = HostBond(
                peer: BluetoothAddress(value: 0xC100_0000_0000 | UInt64(index), type: .random), secureConnections: true,
                authenticated: false, keySize: 16, longTermKey: (0..<16).map { UInt8(truncatingIfNeeded: index &+ $0) },
                localKeys: DistributedKeys(), peerKeys: DistributedKeys())
            bond.lastUsed = UInt64(index + 1)
            return bond
        }
    }

    /// A write the test holds: it says it started (with the bytes' length) and waits to be released.
    final class HeldWrite: Sendable {
        let started: AsyncStream<Int>
        let startedContinuation: AsyncStream<Int>.Continuation
        let release = DispatchSemaphore(value: 0)
        let written = Mutex<[[UInt8]]>([])

        init() { (started, startedContinuation) = AsyncStream<Int>.makeStream() }

        var write: BondFileWriter.Write {
            { _, bytes throws(PrivateFile.Failure) in
                self.startedContinuation.yield(bytes.count)
                self.release.wait()
                self.written.withLock { $0.append(bytes) }
            }
        }

        func nextStart() async -> Int? {
            for await length in started { return length }
            return nil
        }
    }

    @Test("while a save of 5,000 bonds is being written, another link's 50 reads are all answered; the save then completes")
    func aSaveDoesNotHoldUpTheHost() async throws {
        let hosts = EngineHostsOnVirtualLink(central: Self.centralAddress, peripheral: Self.peripheralAddress)
        let (central, peripheral) = (hosts.central, hosts.peripheral)
        var builder = GATTDatabaseBuilder()
        try builder.addService(BluetoothUUID(0x180F))
        let level = try builder.addCharacteristic(BluetoothUUID(0x2A19), properties: [.read], permissions: [.read], value: .cached([0x64]))
        await peripheral.setDatabase(builder.build())
        _ = try await central.perform(.start).get()
        _ = try await peripheral.perform(.start).get()
        _ = try await peripheral.perform(.startAdvertising(.named("Battery"))).get()
        guard case .connected(let connection) = try await central.perform(.connect(Self.peripheralAddress, LEConnectionParameters())).get() else {
            Issue.record("no connection")
            return
        }
        _ = try await central.perform(.gatt(connection: connection.handle, .discoverAll)).get()

        // The peripheral's host holds a large store; its save is held inside the file write.
        await peripheral.addBonds(Self.bonds(5_000))
        let held = HeldWrite()
        let writer = BondFileWriter(path: "/nonexistent/keys.json", write: held.write)
        writer.save(await peripheral.bonds, localAddress: await peripheral.localAddress, label: "first")
        let length = await held.nextStart()
        #expect((length ?? 0) > 500_000, "the whole store was encoded: \(length ?? 0) octets")

        // Every read is answered while the write has not finished.
        var answered = 0
        for _ in 0..<50 {
            if case .success(.value([0x64])) = await central.perform(.gatt(connection: connection.handle, .read(handle: level.valueHandle))) {
                answered += 1
            }
        }
        #expect(answered == 50)
        #expect(writer.writes == 0 && writer.isBusy, "the save was still held while the reads went through")

        // Saves asked for meanwhile are merged: one more write, of the latest bonds.
        for count in [10, 20, 30] { writer.save(Self.bonds(count), localAddress: nil) }
        held.release.signal()
        #expect(await held.nextStart() != nil, "the merged save started")
        held.release.signal()
        await writer.flush()
        #expect(writer.writes == 2)
        let files = held.written.withLock { $0 }
        #expect(files.count == 2)
        let last = try BondFile.decode(String(decoding: try #require(files.last), as: UTF8.self))
        #expect(last.count == 30, "the latest snapshot, not one per save")
        await central.close()
        await peripheral.close()
    }

    static func directory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bond-writer-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test("a save through a symbolic link replaces the link's target atomically; the link stays a link, mode 0600")
    func symbolicLinkKept() async throws {
        let root = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/dotfiles", withIntermediateDirectories: true)
        try Data("old".utf8).write(to: URL(fileURLWithPath: root + "/dotfiles/keys.json"))
        // A relative link, as `ln -s dotfiles/keys.json keys.json` makes.
        try FileManager.default.createSymbolicLink(atPath: root + "/keys.json", withDestinationPath: "dotfiles/keys.json")
        let reported = Mutex<[BondFileWriter.Outcome]>([])
        let writer = BondFileWriter(path: root + "/keys.json", report: { outcome in reported.withLock { $0.append(outcome) } })
        writer.save(Self.bonds(3), localAddress: nil, label: "saved")
        await writer.flush()
        let attributes = try FileManager.default.attributesOfItem(atPath: root + "/keys.json")
        #expect(attributes[.type] as? FileAttributeType == .typeSymbolicLink, "still a link")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: root + "/keys.json") == "dotfiles/keys.json")
        let target = try String(contentsOfFile: root + "/dotfiles/keys.json", encoding: .utf8)
        #expect(try BondFile.decode(target).count == 3, "the target holds the new bonds")
        let mode = try FileManager.default.attributesOfItem(atPath: root + "/dotfiles/keys.json")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/dotfiles") == ["keys.json"], "no temporary file left")
        guard case .success(3)? = reported.withLock({ $0.first?.result }) else {
            Issue.record("reported: \(reported.withLock { $0 })")
            return
        }
    }

    @Test("a directory where the file should be: reading and writing fail in words, and the directory is left alone")
    func directoryRefusedInWords() async throws {
        let root = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(throws: PrivateFile.Failure.self) { try PrivateFile.read(root) }
        do {
            _ = try PrivateFile.read(root)
        } catch {
            #expect(error.reason == "it is a directory, not a file")
        }
        do {
            try PrivateFile.replace(root, with: [1, 2, 3])
            Issue.record("a directory was replaced")
        } catch {
            #expect(error.reason == "it is a directory, not a file")
        }
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory) && isDirectory.boolValue)
        #expect(try PrivateFile.read(root + "/missing.json") == nil, "a missing file is no bonds, not an error")
    }
}
