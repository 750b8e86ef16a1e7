import Bluewire
import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHCI
import Foundation
import Testing

/// bumble's peripheral drops the link instead of answering a request in the middle of each GATT
/// procedure (bumble_link.py --disconnect-on): the procedure and the operations queued behind it fail
/// with the disconnection reason, nothing hangs, and the state machine ends in Disconnected.
@Suite("Peer disconnecting mid-procedure (bumble)")
struct GATTClientDisconnectionInteropTests {
    struct Procedure: Sendable, CustomTestStringConvertible {
        var name: String
        /// bumble_link.py --disconnect-on OPCODE:N
        var disconnectOn: String
        /// Discovery the procedure needs first (done before the fault can trigger).
        var prepare: Bool
        var run: @Sendable (GATTPeripheralSession) async throws -> Void
        var testDescription: String { name }
    }

    static let procedures: [Procedure] = [
        Procedure(name: "discovery", disconnectOn: "08:3", prepare: false) { session in
            _ = try await session.gatt.discoverAll()
        },
        Procedure(name: "long read", disconnectOn: "0C:4", prepare: true) { session in
            _ = try await session.gatt.readLong(handle: try session.valueHandle(of: GATTInteropDatabase.long))
        },
        Procedure(name: "long write", disconnectOn: "16:4", prepare: true) { session in
            try await session.gatt.writeLong([UInt8](repeating: 0xA5, count: 300), to: try session.valueHandle(of: GATTInteropDatabase.long))
        },
        Procedure(name: "subscription", disconnectOn: "12:1", prepare: true) { session in
            _ = try await session.gatt.subscribe(to: try await session.characteristic(GATTInteropDatabase.counter))
        },
    ]

    /// The wait for the procedure to start has no bound of its own (it waits for events, not
    /// time), so the test's time limit ends one that never comes.
    @Test(
        "every pending operation fails with the disconnection reason and the machine is back in Disconnected",
        .timeLimit(.minutes(1)), arguments: procedures)
    func peerDisconnectsMidProcedure(_ procedure: Procedure) async throws {
        let capture = procedure.name == "long read" ? interopCapturePath("bluewire_gatt_disconnect_mid_read.btsnoop") : nil
        defer { removeTemporaryCapture(capture) }
        try await withGATTPeripheral(
            arguments: ["--disconnect-on", procedure.disconnectOn], capture: capture, ownAddress: capture == nil ? nil : "C4:5A:17:00:B2:05"
        ) { session in
            let gatt = session.gatt
            if procedure.prepare {
                for service in try await gatt.discoverServices() where service.uuid == GATTInteropDatabase.service {
                    for characteristic in try await gatt.discoverCharacteristics(of: service) {
                        _ = try await gatt.discoverDescriptors(of: characteristic)
                    }
                }
            }
            var transitions = gatt.transitions().makeAsyncIterator()
            let control = try session.valueHandle(of: GATTInteropDatabase.control)
            let first = Task { try await procedure.run(session) }
            // Queued behind the procedure, not ahead of it (the read would be refused before discovery).
            // Checked again at each transition of the machine, with no polling: the procedure's first
            // phase fires a trigger as it starts, inside the running operation, and the link's end
            // (if the drop came first) ends the sequence. Then the queued operations must report the
            // same reason.
            var last: ConnectionTransition?
            while await gatt.queue.runningID == nil, gatt.disconnectionReason == nil {
                guard let transition = await transitions.next() else { break }
                last = transition
            }
            #expect(await gatt.queue.runningID != nil || gatt.disconnectionReason != nil)
            let queued = [
                Task { _ = try await gatt.read(handle: control) },
                Task { try await gatt.write([0x42], to: control) },
            ]
            let expected = GATTError.disconnected(.remoteUserTerminatedConnection)
            for (name, task) in [("procedure", first), ("queued read", queued[0]), ("queued write", queued[1])] {
                let outcome = await task.result
                #expect(throws: expected, "\(name)") { try outcome.get() }
            }
            let fault = await session.events.first { $0["disconnecting_on"] != nil }
            #expect(fault != nil, "the peer dropped the link at its fault, not for another reason")
            while let transition = await transitions.next() { last = transition }
            #expect(last?.trigger == .disconnect && last?.to == .initial, "last transition \(String(describing: last))")
            #expect(gatt.state == .initial)
            #expect(await session.connection.isConnected == false)
        }
    }

    @Test("indications flowing when the peer drops the link: what arrived is delivered in order, then the sequence throws the reason")
    func subscriptionSequenceThrowsTheReason() async throws {
        // The 40th Handle Value Confirmation from Bluewire is answered by dropping the link.
        try await withGATTPeripheral(arguments: ["--disconnect-on", "1E:40"]) { session in
            let counter = try await session.characteristic(GATTInteropDatabase.counter)
            let subscription = try await session.gatt.subscribe(to: counter, indications: true)
            var received: [Int] = []
            do {
                for try await notification in subscription {
                    received.append(GATTClientSubscriptionInteropTests.sequenceNumber(notification))
                }
                Issue.record("the sequence ended without an error")
            } catch {
                #expect(error as? GATTError == .disconnected(.remoteUserTerminatedConnection))
            }
            #expect(received == Array(0..<received.count), "in order, none lost")
            #expect(received.count >= 40 && received.count < GATTInteropDatabase.counterCount)
        }
    }
}
