import Bluewire
import BluewireCore
import BluewireGATT
import Foundation

/// `bluewire serve --throughput`: the peer of `bluewire throughput`. Serves Bluewire's throughput
/// service (`ThroughputProfile`: a stream characteristic that notifies sequence-numbered packets as
/// fast as the controller takes them while a central is subscribed, a sink that counts written
/// packets, and the sink's report), advertises it, and prints what the centrals do until SIGINT or
/// SIGTERM.
enum ServeThroughput {
    static func run(name: String?, maxConnections: Int?, json: Bool, live: LiveOptions) async {
        let output = ServeOutput(json: json)
        let name = name ?? "Bluewire Throughput"
        let peer: ThroughputPeer
        do {
            peer = try ThroughputPeer(name: name)
        } catch {
            fail("\(error)")
        }
        let stop = ServeSignals.stopRequests()
        let host: BluetoothHost
        do {
            host = try await live.startHost()
        } catch {
            fail("\(error)")
        }
        await host.setDatabase(peer.database)
        var advertisement: Advertisement
        do {
            advertisement = try Advertisement(name: name, services: [ThroughputProfile.service])
        } catch {
            await host.close()
            fail("\(error)")
        }
        advertisement.maximumConnections = maxConnections
        // Subscribed before advertising, so the first central's connection is not missed.
        let events = await host.peripheralEvents()
        let plan: AdvertisingPlan
        do {
            plan = try await host.startAdvertising(advertisement)
        } catch {
            await host.close()
            fail("\(error)")
        }
        output.advertising(name: advertisement, address: await host.controller?.randomAddress, plan: plan,
                           attributes: peer.database.attributes.count)
        let lines = ThroughputPeerOutput(json: json, serve: output)
        lines.handles(peer.handles)

        let signal = await ServeSignals.serve(until: stop) {
            await peer.serve(on: host, events: events) { lines.print($0) }
        }
        guard let signal else {
            await host.close()
            fail("the controller connection ended")
        }
        if await ServeThroughputShutDown.shutDown(host, within: .seconds(3)) == false {
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

    func print(_ event: ThroughputPeer.Event) {
        switch event {
        case .peripheral(let event):
            serve.print(event)
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

    private func h(_ value: UInt16) -> String { "0x" + hex(value, width: 4) }

    private func emit(text: String, json object: [String: any Sendable]) {
        var line = text
        if json { line = JSONLine.make(object) }
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
