import BluewireCore
import Foundation
import Testing
import PeerTestSupport

/// What a user meets after a `bluewire gatt` command failed or was interrupted: the next command on
/// the same controller must work. bumble's controller keeps a link (and a pending LE Create
/// Connection) across processes and across Reset, so a command that exits without disconnecting
/// makes the next one fail (connection timeout, then Command Disallowed).
extension GATTClientCLIInteropTests {
    /// The handle of the attribute of `uuid` in the peripheral's table, as the CLI takes it.
    static func handle(_ peripheral: Peripheral, _ uuid: BluetoothUUID) throws -> UInt16 {
        let type = hexString(uuid.attBytes)
        return try #require(peripheral.database.first { $0.type == type }?.handle)
    }

    @Test("a failing gatt command leaves the controller free: the next command on the same link succeeds")
    func aFailingCommandIsFollowedByASucceedingOne() async throws {
        let peripheral = try await Peripheral.start()
        defer { peripheral.peer.stop() }
        let control = try Self.handle(peripheral, GATTInteropDatabase.control)
        let controlText = "0x" + hex(control, width: 4)

        // Subscribing to a characteristic without Notify: the error names the handle typed and the property.
        let subscribe = try await peripheral.run(["subscribe", peripheral.address, controlText, "--count", "1"])
        #expect(subscribe.status == 1)
        #expect(subscribe.standardError == "bluewire: characteristic \(controlText) does not support Notify\n")
        // Typed as the declaration handle: the message names that handle, not one the user did not type.
        let declaration = "0x" + hex(control - 1, width: 4)
        let byDeclaration = try await peripheral.run(["subscribe", peripheral.address, declaration, "--indicate"])
        #expect(byDeclaration.standardError == "bluewire: characteristic \(declaration) does not support Indicate\n")

        // A read of a handle that does not exist fails with the server's error...
        let missing = try await peripheral.run(["read", peripheral.address, "0x0fff"])
        #expect(missing.status == 1 && missing.standardError.contains("Invalid Handle"), "\(missing.standardError)")

        // ...and the next command connects and works. The characteristic's declaration handle
        // (value handle − 1) stands for its value.
        let read = try await peripheral.run(["read", peripheral.address, "0x" + hex(control - 1, width: 4), "--json"])
        #expect(read.status == 0, "stderr: \(read.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(read.standardOutput.utf8)) as? [String: Any])
        #expect(object["handle"] as? String == controlText)
        #expect(object["value"] as? String == "00")
        expectSnakeCaseKeys(object)

        // Written through its declaration handle too, as `gatt --help` says: the value handle is written.
        let write = try await peripheral.run(["write", peripheral.address, "0x" + hex(control - 1, width: 4), "c0ffee", "--json"])
        #expect(write.status == 0, "stderr: \(write.standardError)")
        let written = try #require(try JSONSerialization.jsonObject(with: Data(write.standardOutput.utf8)) as? [String: Any])
        #expect(written["handle"] as? String == controlText)
        #expect(written["length"] as? Int == 3)
        #expect(written["procedure"] as? String == "write_request")
        expectSnakeCaseKeys(written)
    }

    @Test("a connection attempt that times out is cancelled: the next command connects")
    func aConnectionTimeoutIsFollowedByASucceedingCommand() async throws {
        let peripheral = try await Peripheral.start()
        defer { peripheral.peer.stop() }
        // Nobody advertises at this address: LE Create Connection stays pending until the timeout.
        let absent = "C0:DE:00:00:00:01/random"
        let timedOut = try await peripheral.run(["read", absent, "0x0003", "--connect-timeout", "1"])
        #expect(timedOut.status == 1)
        #expect(timedOut.standardError.contains("C0:DE:00:00:00:01"), "the error names the address: \(timedOut.standardError)")
        let read = try await peripheral.run(["read", peripheral.address, "0x0003"])
        #expect(read.status == 0, "stderr: \(read.standardError)")
    }

    @Test("SIGINT in the middle of gatt subscribe disconnects: the next command connects")
    func anInterruptedCommandIsFollowedByASucceedingOne() async throws {
        let peripheral = try await Peripheral.start()
        defer { peripheral.peer.stop() }
        let counter = "0x" + hex(try Self.handle(peripheral, GATTInteropDatabase.counter), width: 4)
        let subscribe = try PeripheralProcess("bluewire", ["gatt", "subscribe", peripheral.address, counter, "--transport", peripheral.transport])
        defer { subscribe.stop() }
        try await subscribe.first("the first notification") { $0.contains("notification") }
        subscribe.send(signal: SIGINT)
        let status = await subscribe.exitStatus()
        #expect(status == 0 || status == 130, "stderr: \(subscribe.standardError)")
        let read = try await peripheral.run(["read", peripheral.address, counter])
        #expect(read.status == 0, "stderr: \(read.standardError)")
    }
}
