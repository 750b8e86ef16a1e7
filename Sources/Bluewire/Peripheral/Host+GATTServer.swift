import BluewireATT
import BluewireCore
import BluewireGATT
import Foundation

extension BluetoothHost {
    /// Serves `database` to every central, replacing the previous one. Connected centrals keep their
    /// ATT_MTU but lose their subscriptions and queued writes (the handles may mean something else
    /// now); set the database before advertising.
    ///
    /// Dynamic values' handlers are called on the Host's executor for every read (with the offset a
    /// Read Blob asks for) and write; they must not block.
    public func setDatabase(_ database: GATTDatabase, configuration: GATTServerConfiguration? = nil) {
        if let engineHost { return engineSetDatabase(engineHost, database, configuration: configuration) }
        let limits = configuration ?? GATTServerConfiguration(serverMTU: Int(self.configuration.preferredMTU))
        gattServer = GATTServer(database: peripheral.dynamicWrites.observing(database), configuration: limits)
        for link in links.values {
            gattServer.connect(link.handle)
            if link.bearer.mtu != ATTBearer.defaultMTU { gattServer.setMTU(link.bearer.mtu, for: link.handle) }
        }
        publishServerEvents()
    }

    /// Loads a JSON database file (the attribute-table or services form of Docs/DatabaseFormat.md; see
    /// `GATTDatabase.init(json:)`) and serves it.
    @discardableResult
    public func loadDatabase(jsonFile path: String, configuration: GATTServerConfiguration? = nil) throws(PeripheralError) -> GATTDatabase {
        let bytes: [UInt8]
        do {
            bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw .unreadableFile(path: path, reason: (error as NSError).localizedDescription)
        }
        let database: GATTDatabase
        do {
            database = try GATTDatabase(jsonBytes: bytes[...])
        } catch {
            throw .databaseFile(path: path, error)
        }
        setDatabase(database, configuration: configuration)
        return database
    }

    /// The database served, with the values centrals have written.
    public var database: GATTDatabase {
        if let engineHost { return engineDatabase(engineHost) }
        return gattServer.database
    }

    /// Replaces a cached value (later reads return it). Centrals are not told: call `notify` or
    /// `indicate` for that.
    public func setValue(_ value: [UInt8], for handle: UInt16) throws(PeripheralError) {
        if let engineHost { return try engineSetValue(engineHost, value, for: handle) }
        do {
            try gattServer.database.setValue(value, for: handle)
        } catch {
            throw .database(error)
        }
    }

    /// Sends `value` in a Handle Value Notification (Core Vol 3 Part F §3.4.7.1) to every central
    /// subscribed to notifications of the characteristic at `valueHandle` (or to `connection` only,
    /// if it is subscribed), cut to each link's ATT_MTU − 3 (Part G §4.10). Returns the connections
    /// notified. The PDUs go through each link's ATT bearer and the L2CAP fragmenter, and leave as
    /// the controller returns ACL credits.
    @discardableResult
    public func notify(_ valueHandle: UInt16, value: [UInt8], to connection: UInt16? = nil) throws(PeripheralError) -> [UInt16] {
        if let engineHost { return try engineNotify(engineHost, valueHandle, value: value, to: connection) }
        let pdus: [GATTOutboundPDU]
        do {
            if let connection {
                pdus = try gattServer.notify(handle: valueHandle, value: value, to: connection)
            } else {
                pdus = try gattServer.notify(handle: valueHandle, value: value)
            }
        } catch {
            throw .server(error)
        }
        publishServerEvents()
        var notified: [UInt16] = []
        for pdu in pdus {
            guard let link = links[pdu.connection] else { continue }
            do throws(ATTBearerError) {
                // The server built the PDU for this link's MTU: sent as it is, not encoded again.
                try link.bearer.notify(encoded: pdu.bytes)
                notified.append(pdu.connection)
            } catch {
                log.att.debug("notification on 0x\(hex(pdu.connection, width: 4)) not sent: \(error)")
            }
            drainBearer(handle: pdu.connection)
        }
        return notified
    }

    /// Sends `value` in a Handle Value Indication (Core Vol 3 Part F §3.4.7.2) to every central
    /// subscribed to indications of the characteristic at `valueHandle` (or to `connection` only),
    /// and returns once each has confirmed it or cannot any more.
    ///
    /// A central has at most one indication outstanding (§3.3.2): while one waits for its
    /// confirmation, later ones wait in the server's queue, which is bounded
    /// (`GATTServerConfiguration.maximumQueuedIndications`); a value that finds it full is dropped and
    /// reported as `.queueFull`. An unconfirmed indication times out after 30 s and the link is
    /// dropped (§3.3.3).
    @discardableResult
    public func indicate(_ valueHandle: UInt16, value: [UInt8], to connection: UInt16? = nil) async throws(PeripheralError) -> IndicationOutcome {
        if let engineHost { return try await engineIndicate(engineHost, valueHandle, value: value, to: connection) }
        guard let characteristic = gattServer.database.characteristic(valueHandle: valueHandle) else {
            throw .server(.notCharacteristicValue(valueHandle))
        }
        guard characteristic.properties.contains(.indicate), characteristic.clientConfigurationHandle != nil else {
            throw .server(.notSupportedByCharacteristic(valueHandle))
        }
        let targets = connection.map { [$0] } ?? links.keys.sorted()
        let group = IndicationGroup()
        for target in targets {
            guard let link = links[target],
                  gattServer.subscription(connection: target, valueHandle: valueHandle).indications else { continue }
            let pdus: [GATTOutboundPDU]
            do {
                pdus = try gattServer.indicate(handle: valueHandle, value: value, to: target)
            } catch {
                throw .server(error)
            }
            if publishServerEvents().contains(.indicationDropped(connection: target, handle: valueHandle)) {
                group.outcome.failed[target] = .queueFull
                continue
            }
            group.remaining += 1
            peripheral.indicationTickets[target, default: []].append(group)
            for pdu in pdus { sendIndication(pdu, on: link) }
        }
        guard group.remaining > 0 else { return group.outcome }
        return await withCheckedContinuation { continuation in group.continuation = continuation }
    }

    /// The server's subscriptions to the characteristic at `valueHandle`, one per subscribed central.
    public func subscriptions(of valueHandle: UInt16) -> [GATTSubscription] {
        if let engineHost { return engineSubscriptions(engineHost, of: valueHandle) }
        return links.keys.sorted().map { gattServer.subscription(connection: $0, valueHandle: valueHandle) }
            .filter { $0.configuration != 0 }
    }

    /// What the server and the link hold for one central, to check that no central can make it grow
    /// without bound.
    public func serverState(for connection: UInt16) -> PeripheralConnectionState? {
        if let engineHost { return engineServerState(engineHost, for: connection) }
        guard let link = links[connection] else { return nil }
        return PeripheralConnectionState(
            mtu: gattServer.mtu(for: connection),
            preparedWrites: gattServer.preparedWriteCount(for: connection),
            queuedIndications: gattServer.queuedIndicationCount(for: connection),
            indicationOutstanding: gattServer.indicationOutstanding(on: connection),
            subscriptions: gattServer.clientConfigurations(for: connection).count,
            pendingIndicationCalls: peripheral.indicationTickets[connection]?.count ?? 0,
            queuedACLPackets: aclCredits.queuedCount(handle: connection),
            bearerPendingRequests: link.bearer.pendingRequestCount)
    }

    /// How many connections the GATT server holds state for.
    public var serverConnectionCount: Int {
        if let engineHost { return engineServerConnectionCount(engineHost) }
        return gattServer.connectionCount
    }

    /// Hands one indication PDU from the server to the link's bearer (which times it out).
    func sendIndication(_ pdu: GATTOutboundPDU, on link: Link) {
        guard pdu.bytes.count >= 3 else { return }
        let handle = UInt16(pdu.bytes[1]) | UInt16(pdu.bytes[2]) << 8
        do throws(ATTBearerError) {
            _ = try link.bearer.indicate(handle: handle, value: pdu.bytes.dropFirst(3), now: now)
        } catch {
            // The bearer is closed: the link is being dropped, and its disconnection fails the ticket.
            log.att.debug("indication on 0x\(hex(link.handle, width: 4)) not sent: \(error)")
        }
        drainBearer(handle: link.handle)
    }

    /// The central confirmed the outstanding indication: tell the server, send the next one it had
    /// queued, and settle the `indicate` calls that waited for these.
    func serverIndicationConfirmed(on link: Link) {
        let queuedBefore = gattServer.queuedIndicationCount(for: link.handle)
        let next = gattServer.confirm(connection: link.handle)
        // The server skips queued values whose central unsubscribed meanwhile (without an event).
        let skipped = queuedBefore - gattServer.queuedIndicationCount(for: link.handle) - (next == nil ? 0 : 1)
        publishServerEvents()
        for _ in 0..<max(0, skipped) { settleIndication(on: link.handle, .unsubscribed) }
        if let next { sendIndication(next, on: link) }
    }

    /// Settles the oldest `indicate` call waiting on `connection`.
    func settleIndication(on connection: UInt16, _ failure: IndicationFailure?) {
        guard var tickets = peripheral.indicationTickets[connection], !tickets.isEmpty else { return }
        let group = tickets.removeFirst()
        peripheral.indicationTickets[connection] = tickets.isEmpty ? nil : tickets
        group.resolve(connection, failure)
    }
}

/// A snapshot of what the Host holds for one central (`BluetoothHost.serverState(for:)`).
public struct PeripheralConnectionState: Sendable, Hashable {
    /// The ATT_MTU in force.
    public var mtu: Int
    /// Prepare Write Requests queued (bounded by `GATTServerConfiguration.maximumPreparedWrites`).
    public var preparedWrites: Int
    /// Indications waiting behind the outstanding one.
    public var queuedIndications: Int
    public var indicationOutstanding: Bool
    /// CCCDs this central has set (bounded by the number of CCCDs in the database).
    public var subscriptions: Int
    /// `indicate` calls waiting for this central.
    public var pendingIndicationCalls: Int
    /// ACL fragments waiting for controller buffers.
    public var queuedACLPackets: Int
    /// Requests of the local client waiting on this link.
    public var bearerPendingRequests: Int
}
