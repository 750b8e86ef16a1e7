import BluewireATT
import BluewireCore
import BluewireGATT
import BluewireHostEngine

extension BluetoothHost {
    /// `setDatabase`: the engine's server, with the same limits and the
    /// dynamic write handlers wrapped so that accepted writes become `PeripheralEvent.write`s.
    func engineSetDatabase(_ engineHost: EngineHost, _ database: GATTDatabase, configuration: GATTServerConfiguration?) {
        let limits = configuration ?? GATTServerConfiguration(serverMTU: Int(self.configuration.preferredMTU))
        watchEngineDynamicWrites()
        let observed = peripheral.dynamicWrites.observing(database)
        engineHost.assumeIsolated { host in
            host.engine.setDatabase(observed, configuration: limits)
            host.drain()
        }
    }

    func engineDatabase(_ engineHost: EngineHost) -> GATTDatabase {
        engineHost.onSharedExecutor { $0.engine.database }
    }

    func engineSetValue(_ engineHost: EngineHost, _ value: [UInt8], for handle: UInt16) throws(PeripheralError) {
        let result = engineHost.assumeIsolated { host -> Result<Void, GATTDatabaseError> in
            do throws(GATTDatabaseError) {
                try host.engine.setValue(value, for: handle)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        if case .failure(let error) = result { throw .database(error) }
    }

    /// `notify`: the engine's `.notify`, which completes at once with the
    /// connections it sent the notification on.
    func engineNotify(_ engineHost: EngineHost, _ valueHandle: UInt16, value: [UInt8], to connection: UInt16?) throws(PeripheralError) -> [UInt16] {
        switch enginePerformNow(engineHost, .notify(valueHandle: valueHandle, value: value, connection: connection)) {
        case .success(.notified(let connections))?: return connections
        case .failure(.server(let error))?: throw .server(error)
        // A closed host has no central to notify.
        case .success?, .failure?, nil: return []
        }
    }

    /// `indicate`: one `.indicate` per subscribed central (the engine's takes
    /// one connection), each ending at the central's confirmation or when it cannot come.
    func engineIndicate(_ engineHost: EngineHost, _ valueHandle: UInt16, value: [UInt8], to connection: UInt16?) async throws(PeripheralError) -> IndicationOutcome {
        let targets = try engineIndicationTargets(engineHost, valueHandle, to: connection)
        var outcome = IndicationOutcome()
        if targets.count == 1, let target = targets.first {
            // Handed to the engine before this call suspends: `indicate` calls to one central queue
            // in the order they were made.
            let result = await engineHost.perform(.indicate(valueHandle: valueHandle, value: value, connection: target))
            engineIndicationSettled(target, result, into: &outcome)
        } else if !targets.isEmpty {
            let results = await withTaskGroup(of: (UInt16, Result<HostCompletion, HostEngineError>).self) { group in
                for target in targets {
                    group.addTask { (target, await engineHost.perform(.indicate(valueHandle: valueHandle, value: value, connection: target))) }
                }
                var results: [(UInt16, Result<HostCompletion, HostEngineError>)] = []
                for await result in group { results.append(result) }
                return results
            }
            for (target, result) in results { engineIndicationSettled(target, result, into: &outcome) }
        }
        outcome.confirmed.sort()
        return outcome
    }

    /// The centrals subscribed to indications of the characteristic at `valueHandle` (or
    /// `connection`, if it is), each counted as waiting for one more `indicate` call.
    func engineIndicationTargets(_ engineHost: EngineHost, _ valueHandle: UInt16, to connection: UInt16?) throws(PeripheralError) -> [UInt16] {
        guard let characteristic = engineHost.onSharedExecutor(passing: valueHandle, { $0.engine.database.characteristic(valueHandle: $1) }) else {
            throw .server(.notCharacteristicValue(valueHandle))
        }
        guard characteristic.properties.contains(.indicate), characteristic.clientConfigurationHandle != nil else {
            throw .server(.notSupportedByCharacteristic(valueHandle))
        }
        let targets = engineHost.onSharedExecutor(passing: (connection, valueHandle)) { host, asked in
            (asked.0.map { [$0] } ?? host.engine.connectionHandles).filter {
                host.engine.connection($0) != nil && host.engine.subscription(connection: $0, valueHandle: asked.1).indications
            }
        }
        for target in targets { shell.pendingIndicationCalls[target, default: 0] += 1 }
        return targets
    }

    func engineIndicationSettled(_ target: UInt16, _ result: Result<HostCompletion, HostEngineError>, into outcome: inout IndicationOutcome) {
        let waiting = (shell.pendingIndicationCalls[target] ?? 1) - 1
        shell.pendingIndicationCalls[target] = waiting > 0 ? waiting : nil
        switch result {
        case .success:
            outcome.confirmed.append(target)
        case .failure(.indicationQueueFull):
            outcome.failed[target] = .queueFull
        case .failure(.unsubscribed), .failure(.server):
            outcome.failed[target] = .unsubscribed
        case .failure:
            // The link ended (an unconfirmed indication times out after 30 s and the link is then
            // dropped, Core Vol 3 Part F §3.3.3), or the host closed.
            outcome.failed[target] = .disconnected
        }
    }

    func engineSubscriptions(_ engineHost: EngineHost, of valueHandle: UInt16) -> [GATTSubscription] {
        let handles = shell.links.keys.sorted()
        return engineHost.assumeIsolated { host in
            handles.map { host.engine.subscription(connection: $0, valueHandle: valueHandle) }
        }.filter { $0.configuration != 0 }
    }

    func engineServerState(_ engineHost: EngineHost, for connection: UInt16) -> PeripheralConnectionState? {
        guard shell.links[connection] != nil else { return nil }
        let pendingCalls = shell.pendingIndicationCalls[connection] ?? 0
        return engineHost.assumeIsolated { host in
            PeripheralConnectionState(
                mtu: host.engine.serverMTU(connection: connection),
                preparedWrites: host.engine.preparedWrites(connection: connection),
                queuedIndications: host.engine.queuedIndications(connection: connection),
                indicationOutstanding: host.engine.indicationOutstanding(connection: connection),
                subscriptions: host.engine.clientConfigurationCount(connection: connection),
                pendingIndicationCalls: pendingCalls,
                queuedACLPackets: host.engine.queuedACLPackets(connection: connection),
                bearerPendingRequests: host.engine.pendingClientRequests(connection: connection))
        }
    }

    func engineServerConnectionCount(_ engineHost: EngineHost) -> Int {
        engineHost.onSharedExecutor { $0.engine.serverConnectionCount }
    }
}
