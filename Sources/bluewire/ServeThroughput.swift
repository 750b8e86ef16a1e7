import Bluewire
import BluewireCore
import BluewireGATT
import Foundation

/// `bluewire serve --throughput`: the peer of `bluewire throughput`, on an `EngineHost`. Serves
/// Bluewire's throughput service (`ThroughputProfile`: a stream characteristic that notifies
/// sequence-numbered packets as fast as the controller takes them while a central is subscribed, a
/// sink that counts written packets, and the sink's report), advertises it, and prints what the
/// centrals do until SIGINT or SIGTERM. The engine streams the notifications (`HostRequest.streamATT`).
enum ServeThroughput {
    static func run(name: String?, maxConnections: Int?, mtu: UInt16, json: Bool, live: LiveOptions) async {
        let output = ServeOutput(json: json)
        let name = name ?? "Bluewire Throughput"
        let peer: ThroughputPeer
        do {
            peer = try ThroughputPeer(name: name)
        } catch {
            fail("\(error)")
        }
        let stop = ServeSignals.stopRequests()
        let host: EngineHost
        do {
            host = try await live.startEngineHost(connectionTimeout: .seconds(10)) { $0.preferredMTU = mtu }
        } catch {
            fail("\(error)")
        }
        await host.setDatabase(peer.database)
        // Subscribed before advertising, so the first central's connection is not missed.
        let events = await host.events()
        await host.bringUpForCommand()
        let advertisement: HostAdvertisement
        do {
            // Laid out for legacy PDUs (name shortened into the data, complete in the scan response).
            let layout = try Advertisement(name: name, services: [ThroughputProfile.service])
            advertisement = HostAdvertisement(
                data: layout.data, scanResponse: layout.scanResponse, advertisesWhileConnected: true,
                maximumConnections: maxConnections, prefersLegacyPDUs: true)
        } catch {
            await host.close()
            fail("\(error)")
        }
        if case .failure(let error) = await host.perform(.startAdvertising(advertisement)) {
            await host.close()
            fail("\(error)")
        }
        if let layout = await host.advertisingLayout {
            output.advertising(name: advertisement, address: await host.localAddress, layout: layout,
                               attributes: peer.database.attributes.count)
        }
        let lines = ThroughputPeerOutput(json: json, serve: output)
        lines.handles(peer.handles)

        let centrals = ServeCentrals()
        let signal = await ServeSignals.serve(until: stop) {
            await peer.serve(on: host, events: events) { lines.print($0, centrals: centrals) }
        }
        guard let signal else {
            await host.close()
            fail("the controller connection ended")
        }
        if await ServeDatabase.shutDown(host, centrals: centrals.handles, within: .seconds(3)) == false {
            output.note("disconnecting timed out")
        }
        output.stopped(signal: signal)
    }
}

/// The throughput peer's own lines, beside `serve`'s (text, or JSON lines with --json).
struct ThroughputPeerOutput: Sendable {
    let json: Bool
    let serve: ServeOutput

    func handles(_ handles: ThroughputHandles) {
        emit(text: "throughput service \(ThroughputProfile.service.uuidString): stream \(h(handles.stream)) (notify), "
                + "sink \(h(handles.sink)) (write, write without response), sink report \(h(handles.sinkReport)) (read; write resets)",
             json: ["event": "throughput-service", "service": ThroughputProfile.service.uuidString, "stream": Int(handles.stream),
                    "sink": Int(handles.sink), "sink_report": Int(handles.sinkReport)])
    }

    func print(_ event: ThroughputPeer.EngineEvent, centrals: ServeCentrals) {
        switch event {
        case .host(let event):
            print(event, centrals: centrals)
        case .streamStarted(let connection):
            emit(text: "stream \(h(connection)) started", json: ["event": "stream-started", "connection": Int(connection)])
        case .streamStopped(let connection, let notifications):
            emit(text: "stream \(h(connection)) stopped after \(notifications) notifications",
                 json: ["event": "stream-stopped", "connection": Int(connection), "notifications": notifications])
        case .sinkReset(let connection):
            emit(text: "sink \(h(connection)) reset", json: ["event": "sink-reset", "connection": Int(connection)])
        case .sinkTotals(let connection, let report):
            emit(text: "sink \(h(connection)): \(report.packets) packets, \(report.octets) octets, \(report.lost) lost, \(report.outOfOrder) out of order",
                 json: ["event": "sink", "connection": Int(connection), "packets": report.packets, "octets": report.octets,
                        "lost": report.lost, "out_of_order": report.outOfOrder])
        }
    }

    /// The host's events as `serve` prints them (`ServeOutput`); `centrals` keeps the peers' addresses
    /// for the disconnected line and the shutdown.
    func print(_ event: HostEngineEvent, centrals: ServeCentrals) {
        switch event {
        case .connected(let connection) where connection.role == .peripheral:
            centrals.peers.withLock { $0[connection.handle] = connection.peer }
            serve.connected(connection.handle, peer: connection.peer)
        case .disconnected(let handle, let reason):
            guard let peer = centrals.peers.withLock({ $0.removeValue(forKey: handle) }) else { return }
            serve.print(.disconnected(connection: handle, peer: peer, reason: reason))
        case .mtuChanged(let connection, let mtu):
            serve.mtu(connection, mtu)
        case .serverRead(let connection, let handle, let offset, let value):
            serve.read(connection, handle: handle, offset: offset, value: value)
        case .serverRequestRefused(let connection, let request, let handle, let error):
            serve.refused(connection, request: request, handle: handle, error: error)
        case .server(let serverEvent):
            serve.server(serverEvent)
        case .advertisingStarted:
            serve.advertising(on: true)
        case .advertisingStopped:
            serve.advertising(on: false)
        default:
            break
        }
    }

    private func h(_ value: UInt16) -> String { "0x" + hex(value, width: 4) }

    private func emit(text: String, json object: [String: any Sendable]) {
        var line = text
        if json { line = JSONLine.make(object) }
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
