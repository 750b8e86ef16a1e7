import Bluewire
import Foundation

/// Starts an `EngineHost` on `live`'s transport, clears the controller's leftovers and connects to
/// `peer` as central, with `adjust` applied to the engine's configuration and `configure` to the host
/// before the start (security...). Failures end the process (one line on stderr, status 1) after
/// releasing the controller; SIGINT/SIGTERM from now on release and exit 130.
func connectWithEngine(
    live: LiveOptions, peer: BluetoothAddress, connectTimeout: Double, replayable: Bool = false,
    configure: (EngineHost) async -> Void = { _ in }, adjust: (inout HostEngineConfiguration) -> Void = { _ in }
) async -> (EngineHost, EngineLinkSession, HostConnection, CommandInterrupts) {
    let host: EngineHost
    do {
        host = try await live.startEngineHost(
            connectionTimeout: .microseconds(Int64(connectTimeout * 1_000_000)), replayable: replayable, adjust: adjust)
    } catch {
        fail("\(error)")
    }
    await configure(host)
    let session = EngineLinkSession(host: host)
    let interrupts = CommandInterrupts { Task { await session.interrupt() } }
    await host.bringUpForCommand()
    switch await host.perform(.connect(peer, LEConnectionParameters())) {
    case .success(.connected(let connection)):
        await session.connected(connection.handle)
        return (host, session, connection, interrupts)
    case .success(let other):
        await session.finish()
        fail("connecting to \(peer): unexpected \(other)")
    case .failure(let error):
        await session.finish()
        var text = "connecting to \(peer) failed: \(PairOutput.describe(error, connectTimeout: connectTimeout))"
        // Most LE peripherals advertise from a random address; without `/random` the address is taken
        // as public, and the controller waits for an advertiser that never appears.
        if case .connectionTimeout = error, peer.type == .public {
            text += "; \(peer) was taken as a public address: for a random one give \(peer.hexString)/random, as `bluewire scan` prints it"
        }
        fail(text)
    }
}

/// The link an engine-based command (`pair`, `l2cap`) holds, and how it is released on every exit
/// path: success, failure, SIGINT/SIGTERM.
actor EngineLinkSession {
    let host: EngineHost
    var handle: UInt16?
    var releasing: Task<Void, Never>?
    /// SIGINT/SIGTERM arrived: whatever the command was doing ends with status 130.
    private(set) var interrupted = false

    init(host: EngineHost) { self.host = host }

    func connected(_ handle: UInt16) { self.handle = handle }

    /// Cancels a connection attempt still pending, disconnects the link, closes the host. Every
    /// caller returns once that is done (the first one does it).
    func release() async {
        if let releasing { return await releasing.value }
        let host = self.host, handle = self.handle
        let task = Task {
            if let handle {
                _ = await host.perform(.disconnect(handle: handle, reason: .remoteUserTerminatedConnection))
            } else {
                _ = await host.perform(.cancelConnect)
            }
            await host.close()
        }
        releasing = task
        await task.value
    }

    /// The signal handler's path: release, then exit 130.
    func interrupt() async -> Never {
        interrupted = true
        await release()
        Foundation.exit(130)
    }

    /// Releases and, if a signal came meanwhile, ends with its status instead of the command's.
    func finish() async {
        await release()
        if interrupted { Foundation.exit(130) }
    }
}
