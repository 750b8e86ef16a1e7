import BluewireCore
import Synchronization

/// The engine of `CaptureTap`: an in-memory queue of records that the tap's callers append to, and
/// one dedicated thread that drains it to the capture file, in order.
///
/// - Record: `append` takes the packet (its storage is shared, not copied), direction and timestamp
///   under one lock, into an array whose capacity is reused, so recording allocates nothing per
///   packet in steady state and never waits for the file system. Lock order is file order.
/// - Write: the thread swaps the whole queue for its own empty array under the lock, then encodes
///   and writes the batch with the lock released. It waits in poll(2) on an eventfd when the queue
///   is empty; a caller signals it only when it is waiting (no system call per packet in a burst).
/// - Bound: at most `maximumQueuedBytes` of records wait; a packet that finds the queue full is not
///   recorded, and every later record carries the number dropped so far in btsnoop's cumulative
///   drops field (a reader sees the gap).
/// - Flush/close: `flush()` and `close()` suspend (never block) until the thread has written
///   everything queued before them; `close()` then closes the file and ends the thread.
/// - Errors: the first write error is kept; later records are discarded without writing.
final class CaptureWriterLoop: Sendable {
    private struct Record {
        var packet: HCIPacket
        var direction: PacketDirection
        var timestamp: Int64
        var drops: UInt32
    }

    private enum Phase { case open, closing, closed }

    private struct State {
        var phase = Phase.open
        var queue: [Record] = []
        var queuedBytes = 0
        var dropped: UInt32 = 0
        /// The thread is (about to be) waiting in poll(2) and needs a signal.
        var writerWaiting = false
        var error: CaptureFileError?
        var flushWaiters: [CheckedContinuation<Void, Never>] = []
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// Bytes a record costs in the queue's budget beyond its payload (the btsnoop record header and
    /// the H4 indicator).
    private static let recordOverhead = 25

    let maximumQueuedBytes: Int
    private let path: String
    private let state = Mutex(State())
    /// Used by the writer thread only (and by nothing once it has closed it).
    private let file: Mutex<CaptureFileWriter?>
    private let wakeup: FileDescriptor?

    /// Takes ownership of `writer` and starts the writer thread. If no thread can be started the
    /// capture stays empty and `error` says why.
    init(writer: sending CaptureFileWriter, maximumQueuedBytes: Int) {
        self.maximumQueuedBytes = maximumQueuedBytes
        path = writer.path
        file = Mutex(writer)
        var notifier: FileDescriptor?
        var failure: SystemCallError?
        do throws(SystemCallError) {
            notifier = try FileDescriptor.eventNotifier()
        } catch {
            failure = error
        }
        wakeup = notifier
        if let notifier {
            do throws(SystemCallError) {
                try DedicatedThread.start { [self] in runWriterLoop() }
            } catch {
                failure = error
                try? notifier.close()
            }
        }
        if let failure {
            state.withLock { $0.phase = .closed; $0.error = .writeFailed(path: path, errno: failure.errno.rawValue) }
            file.withLock { writer in
                try? writer?.close()
                writer = nil
            }
        }
    }

    var error: CaptureFileError? { state.withLock { $0.error } }

    var droppedPackets: Int { state.withLock { Int($0.dropped) } }

    /// Queues one packet for the file (from the tap's callers; never waits for the file system).
    func append(_ packet: HCIPacket, _ direction: PacketDirection, timestamp: Int64) {
        state.withLock { state in
            guard state.phase == .open, state.error == nil else { return }
            let cost = packet.payload.count + Self.recordOverhead
            guard state.queuedBytes + cost <= maximumQueuedBytes || state.queue.isEmpty else {
                state.dropped &+= 1
                return
            }
            state.queue.append(Record(packet: packet, direction: direction, timestamp: timestamp, drops: state.dropped))
            state.queuedBytes += cost
            wakeWriter(&state)
        }
    }

    /// Returns once everything appended before the call is in the file (or could not be written).
    func flush() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.phase == .closed { return true }
                state.flushWaiters.append(waiter)
                wakeWriter(&state)
                return false
            }
            if done { waiter.resume() }
        }
    }

    /// Writes everything appended so far, closes the file and ends the thread; returns when done.
    /// Packets appended afterwards are not recorded.
    func close() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.phase == .closed { return true }
                state.phase = .closing
                state.closeWaiters.append(waiter)
                wakeWriter(&state)
                return false
            }
            if done { waiter.resume() }
        }
    }

    /// Asks the thread to write what is queued and close the file, without waiting (for `deinit`).
    func requestClose() {
        state.withLock { state in
            guard state.phase == .open else { return }
            state.phase = .closing
            wakeWriter(&state)
        }
    }

    /// Signals the thread if it waits (once per wait: no system call per packet of a burst). Called
    /// inside the lock, so never after the thread, having marked the phase closed, closed `wakeup`.
    private func wakeWriter(_ state: inout State) {
        guard state.writerWaiting else { return }
        state.writerWaiting = false
        wakeup?.signalEvent()
    }

    // MARK: Writer thread

    private enum Step {
        case wait
        case write(flushWaiters: [CheckedContinuation<Void, Never>])
        case close
    }

    private func runWriterLoop() {
        guard let wakeup else { return }
        // This thread writes itself: a stuck file system then holds this loop's bounded queue, not
        // the writer's own (unbounded) queue of blocks.
        file.withLock { $0?.writeOnCallingThread() }
        var batch: [Record] = []
        while true {
            let step = state.withLock { state -> Step in
                if !state.queue.isEmpty || !state.flushWaiters.isEmpty {
                    // The thread's drained array (capacity kept) becomes the callers' next queue.
                    swap(&batch, &state.queue)
                    state.queuedBytes = 0
                    defer { state.flushWaiters.removeAll(keepingCapacity: true) }
                    return .write(flushWaiters: state.flushWaiters)
                }
                if state.phase == .closing { return .close }
                state.writerWaiting = true
                return .wait
            }
            switch step {
            case .wait:
                // The eventfd counter keeps a signal sent before poll(2) starts: no wake-up is lost.
                do throws(SystemCallError) {
                    try wakeup.waitForEvent()
                } catch {
                    // Nothing can wake the thread any more: stop recording, and close.
                    fail(.writeFailed(path: path, errno: error.errno.rawValue))
                    state.withLock { $0.phase = .closing }
                }
            case .write(let flushWaiters):
                write(batch, flushing: !flushWaiters.isEmpty)
                batch.removeAll(keepingCapacity: true)
                for waiter in flushWaiters { waiter.resume() }
            case .close:
                let failure: CaptureFileError? = file.withLock { writer in
                    defer { writer = nil }
                    do throws(CaptureFileError) { try writer?.close() } catch { return error }
                    return nil
                }
                if let failure { fail(failure) }
                let (flushWaiters, closeWaiters) = state.withLock { state in
                    state.phase = .closed
                    defer { state.flushWaiters = []; state.closeWaiters = [] }
                    return (state.flushWaiters, state.closeWaiters)
                }
                try? wakeup.close()
                for waiter in flushWaiters { waiter.resume() }
                for waiter in closeWaiters { waiter.resume() }
                return
            }
        }
    }

    private func write(_ batch: [Record], flushing: Bool) {
        guard state.withLock({ $0.error == nil }) else { return }
        let failure: CaptureFileError? = file.withLock { writer in
            guard let writer else { return nil }
            do throws(CaptureFileError) {
                for record in batch {
                    try writer.write(record.packet, direction: record.direction, timestamp: record.timestamp,
                                     drops: record.drops)
                }
                if flushing { try writer.flush() }
            } catch {
                return error
            }
            return nil
        }
        if let failure { fail(failure) }
    }

    /// Keeps the first error; later records are dropped unwritten.
    private func fail(_ error: CaptureFileError) {
        state.withLock { state in
            if state.error == nil { state.error = error }
        }
    }
}
