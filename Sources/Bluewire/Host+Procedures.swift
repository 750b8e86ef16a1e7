import BluewireCore
import BluewireHCI

extension BluetoothHost {
    /// Runs a controller procedure (a sequence of HCI commands: start or stop a scan, create or
    /// cancel a connection, recover from a hardware error) after every procedure asked for before
    /// it, and returns its result.
    ///
    /// The controller acts on commands in the order they arrive, and each procedure's effect
    /// depends on the ones before (LE Set Scan Parameters is disallowed while scanning, Core Vol 4
    /// Part E §7.8.10; LE Create Connection Cancel cancels only an attempt already created,
    /// §7.8.13). So procedures are queued at the moment the application asks, synchronously on this
    /// actor, and run one after the other: a `stopScan()` right after `scan()` puts LE Set Scan
    /// Parameters, LE Set Scan Enable (on) and LE Set Scan Enable (off) on the wire in that order.
    ///
    /// A procedure must not wait for another procedure (it would wait for itself), nor for
    /// anything but command completions: waiting for a connection or a disconnection happens
    /// outside, so a cancel queued behind can run.
    func runProcedure<Value: Sendable>(
        _ body: @escaping @Sendable (isolated BluetoothHost) async -> Value
    ) async -> Value {
        await enqueueProcedure(body).value
    }

    /// Queues a procedure (see `runProcedure`) without waiting for it; the returned task ends with it.
    @discardableResult
    func enqueueProcedure<Value: Sendable>(
        _ body: @escaping @Sendable (isolated BluetoothHost) async -> Value
    ) -> Task<Value, Never> {
        let previous = procedureTail
        let procedure = Task<Value, Never> {
            await previous?.value
            return await body(self)
        }
        procedureTail = Task { _ = await procedure.value }
        return procedure
    }
}
