import Bluewire
import Foundation
import Synchronization

/// `bluewire serve --throughput --psm P`: the source of `bluewire throughput --mode l2cap`. On an
/// `EngineHost` (credit based channels live there): advertises, accepts LE credit based channels on
/// SPSM P (Core Vol 3 Part A §4.22) and on each one sends sequence-numbered SDUs as fast as credits
/// allow (`ChannelThroughput.stream`) until the channel closes, printing one line per event until
/// SIGINT or SIGTERM. Advertising resumes after each disconnection (the engine does it).
enum ServeChannelThroughput {
    static func run(name: String?, psm: SPSM, sduLength: Int?, json: Bool, live: LiveOptions) async {
        let output = ServeOutput(json: json)
        let lines = ServeChannelOutput(json: json)
        let name = name ?? "Bluewire Throughput"
        let stop = ServeSignals.stopRequests()
        let host: EngineHost
        do {
            host = try await live.startEngineHost(connectionTimeout: .seconds(10))
        } catch {
            fail("\(error)")
        }
        // The centrals connected, by handle (their addresses for the disconnected line).
        let links = ServeChannelLinks()
        // Subscribed before advertising, so the first central's connection is not missed.
        let events = await host.events()
        await host.bringUpForCommand()
        let listener: L2CAPChannelListener
        do {
            listener = try await host.listen(psm: psm)
        } catch {
            await host.close()
            fail("cannot listen on SPSM 0x\(hex(psm.rawValue, width: 4)): \(error)")
        }
        if case .failure(let error) = await host.perform(.startAdvertising(.named(name))) {
            await host.close()
            fail("cannot advertise: \(error)")
        }
        lines.advertising(name: name, address: await host.localAddress, psm: psm)

        let signal = await ServeSignals.serve(until: stop) {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await event in events {
                        switch event {
                        case .connected(let connection):
                            links.peers.withLock { $0[connection.handle] = connection.peer }
                            lines.connected(connection.handle, peer: connection.peer)
                        case .disconnected(let handle, let reason):
                            let peer = links.peers.withLock { $0.removeValue(forKey: handle) }
                            if let peer { output.print(.disconnected(connection: handle, peer: peer, reason: reason)) }
                        case .advertisingStarted: lines.advertising(on: true)
                        case .advertisingStopped: lines.advertising(on: false)
                        default: break
                        }
                    }
                    // The host's events end when the controller connection does.
                }
                group.addTask {
                    for await channel in listener {
                        let length = min(sduLength ?? channel.peerMTU, channel.peerMTU)
                        lines.opened(channel, sduLength: length)
                        Task {
                            let (sent, end) = await ChannelThroughput.stream(on: channel, sduLength: length)
                            lines.closed(channel, sent: sent, reason: end)
                        }
                    }
                    // Keep waiting for the signal or the end of the events.
                    while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
                }
                // The events ended (the controller connection did): stop accepting channels too.
                await group.next()
                group.cancelAll()
            }
        }
        guard let signal else {
            await host.close()
            fail("the controller connection ended")
        }
        // Leave the controller as found: advertising off, every central disconnected.
        await listener.stop()
        _ = await host.perform(.stopAdvertising)
        for handle in links.peers.withLock({ $0.keys }).sorted() {
            _ = await host.perform(.disconnect(handle: handle, reason: .remoteUserTerminatedConnection))
        }
        await host.close()
        output.stopped(signal: signal)
    }
}

/// The channel source's own lines, beside `serve`'s (text, or JSON lines with --json).
struct ServeChannelOutput: Sendable {
    let json: Bool

    func advertising(name: String, address: BluetoothAddress, psm: SPSM) {
        emit(text: "advertising \"\(name)\" as \(address), throughput source on SPSM \(h(psm.rawValue))",
             json: ["event": "advertising", "name": name, "address": "\(address)", "psm": Int(psm.rawValue)])
    }

    /// As `serve` prints it (`ServeOutput`).
    func advertising(on: Bool) {
        emit(text: on ? "advertising on" : "advertising off", json: ["event": on ? "advertising-on" : "advertising-off"])
    }

    /// As `serve` prints it (`ServeOutput`).
    func connected(_ handle: UInt16, peer: BluetoothAddress) {
        emit(text: "connected \(h(handle)) \(peer)", json: ["event": "connected", "connection": Int(handle), "peer": "\(peer)"])
    }

    func opened(_ channel: L2CAPChannel, sduLength: Int) {
        emit(text: "channel \(h(channel.cid)) opened on \(h(channel.connection)), SPSM \(h(channel.psm.rawValue)) "
                + "(peer MTU \(channel.peerMTU), MPS \(channel.peerMPS)): sending \(sduLength)-octet SDUs",
             json: ["event": "channel-opened", "connection": Int(channel.connection), "cid": Int(channel.cid),
                    "psm": Int(channel.psm.rawValue), "peer_mtu": channel.peerMTU, "peer_mps": channel.peerMPS,
                    "sdu_length": sduLength])
    }

    func closed(_ channel: L2CAPChannel, sent: Int, reason: L2CAPChannelError) {
        emit(text: "channel \(h(channel.cid)) on \(h(channel.connection)) ended after \(sent) SDUs: \(reason)",
             json: ["event": "channel-closed", "connection": Int(channel.connection), "cid": Int(channel.cid), "sdus": sent,
                    "reason": "\(reason)"])
    }

    private func h(_ value: UInt16) -> String { "0x" + hex(value, width: 4) }

    private func emit(text: String, json object: [String: any Sendable]) {
        say(json ? JSONLine.make(object) : text)
    }
}

/// The centrals connected to the channel source, by handle.
final class ServeChannelLinks: Sendable {
    let peers = Mutex<[UInt16: BluetoothAddress]>([:])
}
