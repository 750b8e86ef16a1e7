import BluewireCore
import Synchronization

/// The engine of `DescriptorTransport`: one non-blocking file descriptor (socket or tty), driven by
/// one dedicated I/O thread that waits in poll(2) on the descriptor and on an eventfd.
///
/// - Inbound: the thread reads, frames (H4 byte streams) or takes each read as one packet (HCI user
///   channel) and yields packets into `inbound` in order. No task per packet, no sleeping.
/// - Outbound: `send` writes at once from the caller when nothing is queued (a non-blocking write
///   under the state lock, so sends never interleave); what the kernel does not take is queued and
///   the I/O thread finishes it when poll says the descriptor is writable.
/// - Close: `close()` marks the state and wakes the thread through the eventfd; the thread closes
///   the descriptors and resumes everyone waiting.
final class DescriptorIOLoop: Sendable {
    enum Framing: Sendable {
        /// A byte stream carrying H4 (UART, TCP, Unix socket): packets need an `H4Framer`.
        case h4Stream
        /// Every read returns exactly one H4 packet (the HCI user channel socket).
        case packetPerRead
    }

    /// A send the kernel did not take whole. Its completion is an unsafe continuation, not a checked
    /// one (which allocates a canary on every send, written at once or not): it is resumed exactly
    /// once, by whoever takes the write out of `pending` (`flushPending` or `shutDown`), or at once by
    /// `send` when it was never queued. Resumed at once, inside `withUnsafeContinuation`, it does not
    /// suspend the sender: the await goes on in the same task (`Benchmarks/TransportSend`: the same
    /// time per send as a version that made no continuation unless the write was queued). A send
    /// allocates nothing: the packet is written after its indicator without joining them in an
    /// array (`FileDescriptor.write(header:body:from:isSocket:)`), and a queued one keeps the packet.
    private struct PendingWrite {
        /// The packet: written after its H4 indicator as a gathered write
        /// (`FileDescriptor.write(header:body:from:isSocket:)`), never copied.
        let packet: HCIPacket
        /// Octets written so far, over the indicator and the payload.
        var written: Int
        var length: Int { 1 + packet.payload.count }
        let completion: UnsafeContinuation<Result<Void, TransportError>, Never>
    }

    private enum Phase { case open, closing, closed }

    private struct State {
        var phase = Phase.open
        var pending: [PendingWrite] = []
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
        /// Tasks in `waitForQueuedWrite()` (tests).
        var queueWaiters: [CheckedContinuation<Void, Never>] = []
        /// Why the thread stopped, for sends that arrive afterwards.
        var failure: TransportError?
    }

    let inbound: HCIInboundPackets
    private let continuation: HCIInboundPackets.Continuation
    private let descriptor: FileDescriptor
    private let wakeup: FileDescriptor
    private let isSocket: Bool
    private let framing: Framing
    private let state = Mutex(State())

    /// Takes ownership of `descriptor` (already non-blocking) and starts the I/O thread.
    init(descriptor: FileDescriptor, isSocket: Bool, framing: Framing) throws(TransportError) {
        self.descriptor = descriptor
        self.isSocket = isSocket
        self.framing = framing
        (inbound, continuation) = HCIInboundPackets.makeStream()
        do throws(SystemCallError) {
            wakeup = try FileDescriptor.eventNotifier()
        } catch {
            try? descriptor.close()
            throw .system(error)
        }
        do throws(SystemCallError) {
            try DedicatedThread.start { [self] in runIOLoop() }
        } catch {
            try? descriptor.close()
            try? wakeup.close()
            throw .system(error)
        }
    }

    func send(_ packet: HCIPacket) async throws(TransportError) {
        let result: Result<Void, TransportError> = await withUnsafeContinuation { completion in
            let immediate: Result<Void, TransportError>? = state.withLock { state in
                guard state.phase == .open else { return .failure(state.failure ?? .closed) }
                var written = 0
                if state.pending.isEmpty {
                    do throws(SystemCallError) {
                        written = try descriptor.write(header: packet.type.rawValue, body: packet.payload, isSocket: isSocket)
                    } catch {
                        return .failure(.system(error))
                    }
                    if written == 1 + packet.payload.count { return .success(()) }
                }
                state.pending.append(PendingWrite(packet: packet, written: written, completion: completion))
                // Inside the lock: the I/O thread closes `wakeup` only after marking the phase closed.
                wakeup.signalEvent()
                for waiter in state.queueWaiters { waiter.resume() }
                state.queueWaiters.removeAll()
                return nil
            }
            if let immediate { completion.resume(returning: immediate) }
        }
        try result.get()
    }

    /// Returns once a send has been queued because the kernel did not take it whole (at once if one
    /// is queued now): for tests of the queued path, which must know the kernel's buffer is full.
    func waitForQueuedWrite() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                if !state.pending.isEmpty { return true }
                state.queueWaiters.append(waiter)
                return false
            }
            if now { waiter.resume() }
        }
    }

    /// Asks the I/O thread to close without waiting for it (for `deinit`).
    func requestClose() {
        state.withLock { state in
            guard state.phase == .open else { return }
            state.phase = .closing
            wakeup.signalEvent()
        }
    }

    func close() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.phase == .closed { return true }
                state.phase = .closing
                state.closeWaiters.append(waiter)
                wakeup.signalEvent()
                return false
            }
            if done { waiter.resume() }
        }
    }

    // MARK: I/O thread

    private func runIOLoop() {
        let capacity = framing == .packetPerRead ? 1 + 4 + 0xFFFF : 16 * 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
        defer { buffer.deallocate() }
        var framer = H4Framer()
        var batch: [HCIPacket] = []
        var bytesRead = 0
        var failure: TransportError?
        loop: while true {
            let (closing, wantsWrite) = state.withLock { ($0.phase != .open, !$0.pending.isEmpty) }
            if closing { break }
            let events: [PollEvents]
            do throws(SystemCallError) {
                events = try FileDescriptor.poll(
                    [(descriptor, wantsWrite ? [.readable, .writable] : .readable), (wakeup, .readable)],
                    timeoutMilliseconds: -1)
            } catch {
                failure = .system(error)
                break
            }
            if !events[1].isEmpty { wakeup.drainEvent() }
            if events[0].contains(.writable), let error = flushPending() {
                failure = error
                break
            }
            guard !events[0].isDisjoint(with: [.readable, .hangUp, .error]) else { continue }
            // Every packet this wake-up reads goes to the consumer in one batch: one lock and one
            // wake-up of the host's loop for a burst, not one per packet.
            var ended = false
            for _ in 0..<(framing == .packetPerRead ? Self.readsPerWakeup : 1) {
                let count: Int
                do throws(SystemCallError) {
                    guard let read = try descriptor.read(into: buffer) else { break }
                    count = read
                } catch where error.errno == .ioError && !isSocket {
                    // A pty whose other side closed reads EIO: that is the end of the stream.
                    count = 0
                } catch {
                    failure = .system(error)
                    ended = true
                    break
                }
                if count == 0 {
                    if framing == .h4Stream {
                        do throws(H4FramingError) { try framer.finish() } catch { failure = .framing(error) }
                    }
                    ended = true
                    break
                }
                // One copy out of the reusable buffer per read; packets are slices of it from here on.
                let chunk = [UInt8](UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                defer { bytesRead += count }
                if let error = collect(chunk, streamOffset: bytesRead, framer: &framer, into: &batch) {
                    failure = error
                    ended = true
                    break
                }
            }
            // What arrived before an error or the end is delivered before it.
            if !batch.isEmpty {
                continuation.yield(contentsOf: batch[...])
                batch.removeAll(keepingCapacity: true)
            }
            if ended { break }
        }
        shutDown(failure: failure)
    }

    /// Reads per poll wake-up on a packet-per-read descriptor (the HCI user channel), until the
    /// socket has nothing more: a burst of notifications reaches the host as one batch.
    static var readsPerWakeup: Int { 32 }

    /// The packets in `chunk`, appended to `batch`.
    private func collect(
        _ chunk: [UInt8], streamOffset: Int, framer: inout H4Framer, into batch: inout [HCIPacket]
    ) -> TransportError? {
        switch framing {
        case .packetPerRead:
            guard let type = HCIPacketType(rawValue: chunk[0]) else {
                return .framing(H4FramingError(.unknownPacketType, packetType: chunk[0], offset: streamOffset))
            }
            batch.append(HCIPacket(type: type, payload: chunk[1...]))
        case .h4Stream:
            framer.append(chunk)
            do {
                while let packet = try framer.nextPacket() { batch.append(packet) }
            } catch {
                return .framing(error)
            }
        }
        return nil
    }

    /// Writes queued packets until done or the kernel buffer is full; completes finished sends.
    private func flushPending() -> TransportError? {
        var completed: [UnsafeContinuation<Result<Void, TransportError>, Never>] = []
        let error: TransportError? = state.withLock { state in
            while !state.pending.isEmpty {
                let written: Int
                do throws(SystemCallError) {
                    let packet = state.pending[0].packet
                    written = try descriptor.write(
                        header: packet.type.rawValue, body: packet.payload, from: state.pending[0].written, isSocket: isSocket)
                } catch {
                    return .system(error)
                }
                if written == 0 { return nil }
                state.pending[0].written += written
                if state.pending[0].written == state.pending[0].length {
                    completed.append(state.pending.removeFirst().completion)
                }
            }
            return nil
        }
        for completion in completed { completion.resume(returning: .success(())) }
        return error
    }

    private func shutDown(failure: TransportError?) {
        let (pending, waiters) = state.withLock { state in
            state.phase = .closed
            state.failure = failure
            defer { state.pending = []; state.closeWaiters = []; state.queueWaiters = [] }
            return (state.pending, state.closeWaiters + state.queueWaiters)
        }
        try? descriptor.close()
        try? wakeup.close()
        continuation.finish(throwing: failure)
        for write in pending { write.completion.resume(returning: .failure(failure ?? .closed)) }
        for waiter in waiters { waiter.resume() }
    }
}
