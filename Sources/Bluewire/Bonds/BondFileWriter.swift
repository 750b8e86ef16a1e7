import BluewireCore
import BluewireHostEngine
import Foundation
import Synchronization

/// Saves a host's bonds to a bond file (`BondFile`, Docs/BondFormat.md) on a thread of its own, so
/// that no link waits for a save: neither the host's executor nor the task that asked. `save` takes
/// a copy of the bonds and returns at once; the writer encodes it and replaces the file atomically
/// (`PrivateFile.replace`: a new file beside it, flushed, renamed over it; a symbolic link keeps
/// pointing at it). Saves asked for while one is being written are merged: only the latest bonds
/// are written next, so a burst of pairings costs two writes, not one per pairing.
///
/// A store of 200,000 bonds (40 MB of JSON) took 12 s to save inline, and every other link waited
/// that long (reads stalled 3.7 s); the store's limit (`BondStorePolicy`, 128 by default) keeps it
/// small, and this writer keeps even a large one off every link's path.
public final class BondFileWriter: Sendable {
    /// Writes an encoded bond file to a path (`PrivateFile.replace`, or a test's own).
    public typealias Write = @Sendable (_ path: String, _ bytes: [UInt8]) throws(PrivateFile.Failure) -> Void

    /// How a save ended, with the label its `save` gave.
    public struct Outcome: Sendable {
        public var label: String?
        /// The bonds written, or why the file could not be written (it is then as it was).
        public var result: Result<Int, PrivateFile.Failure>
    }

    struct Snapshot: Sendable {
        var bonds: [HostBond]
        var localAddress: BluetoothAddress?
        var label: String?
        var number: UInt64
    }

    struct State: Sendable {
        var pending: Snapshot?
        var writing = false
        var requested: UInt64 = 0
        var finished: UInt64 = 0
        var writes = 0
        var flushes: [(number: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    }

    public let path: String
    let write: Write
    let report: @Sendable (Outcome) -> Void
    let state = Mutex(State())

    /// - Parameters:
    ///   - path: the bond file (a symbolic link is written through).
    ///   - write: replaces the file with the encoded bonds; `PrivateFile.replace` unless a test
    ///     needs to hold a save where it is.
    ///   - report: called on the writer's thread after each write, with the label given to `save`.
    public init(path: String, write: @escaping Write = { path, bytes throws(PrivateFile.Failure) in try PrivateFile.replace(path, with: bytes) },
                report: @escaping @Sendable (Outcome) -> Void = { _ in }) {
        self.path = path
        self.write = write
        self.report = report
    }

    /// Asks for `bonds` to be saved and returns at once; a later `save` before this one is written
    /// replaces it (the later bonds include whatever this one would have written).
    public func save(_ bonds: [HostBond], localAddress: BluetoothAddress?, label: String? = nil) {
        let startsThread = state.withLock { state in
            state.requested += 1
            state.pending = Snapshot(bonds: bonds, localAddress: localAddress, label: label ?? state.pending?.label, number: state.requested)
            guard !state.writing else { return false }
            state.writing = true
            return true
        }
        // A thread of its own, not a task: a long write must not hold one of the cooperative pool's
        // few threads, which the host and every link run on.
        if startsThread { Thread { self.drain() }.start() }
    }

    /// Waits until every save asked for before this call is written (or failed).
    public func flush() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                guard state.finished < state.requested else { return true }
                state.flushes.append((state.requested, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// How many times the file was written (merged saves count once).
    public var writes: Int { state.withLock { $0.writes } }

    /// Whether a save is being written or waits to be.
    public var isBusy: Bool { state.withLock { $0.writing } }

    /// The writer thread: writes the latest snapshot until none is left.
    func drain() {
        while let snapshot = state.withLock({ state -> Snapshot? in
            guard let next = state.pending else {
                state.writing = false
                return nil
            }
            state.pending = nil
            return next
        }) {
            let bytes = Array((BondFile.encode(snapshot.bonds, localAddress: snapshot.localAddress) + "\n").utf8)
            let result: Result<Int, PrivateFile.Failure>
            do {
                try write(path, bytes)
                result = .success(snapshot.bonds.count)
            } catch {
                result = .failure(error)
            }
            let released = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.finished = snapshot.number
                state.writes += 1
                let ready = state.flushes.filter { $0.number <= snapshot.number }.map(\.continuation)
                state.flushes.removeAll { $0.number <= snapshot.number }
                return ready
            }
            report(Outcome(label: snapshot.label, result: result))
            for continuation in released { continuation.resume() }
        }
    }
}
