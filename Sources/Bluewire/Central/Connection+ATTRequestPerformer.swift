import BluewireATT

/// A live connection is what GATT operations run against: requests go through the link's ATT bearer
/// (one outstanding at a time, Core Vol 3 Part F §3.3.2), commands straight out, and notifications
/// come from the Host's routing. Each connection's `GATTClient` owns a `GATTOperationQueue` over it.
extension Connection: ATTRequestPerformer {
    /// Sends a Write Command or Signed Write Command (no response, §3.4.5.3).
    public nonisolated(nonsending) func send(_ pdu: ATTPDU) async throws(ConnectionError) {
        try await send(command: pdu)
    }

    /// Values of notifications and indications for `valueHandle`, registered before this returns.
    /// The stream finishes when the link ends or the consumer stops iterating.
    public func notifications(for valueHandle: UInt16) async -> AsyncStream<ArraySlice<UInt8>> {
        let (values, output) = AsyncStream<ArraySlice<UInt8>>.makeStream(bufferingPolicy: .unbounded)
        guard let registration = await host.registerNotifications(on: self, valueHandle: valueHandle) else {
            output.finish()
            return values
        }
        // One forwarding task per registration keeps the order the Host delivered them in; it owns
        // the registration, which ends when the task does.
        let forwarding = Task {
            while let notification = await registration.registration.queue.next() { output.yield(notification.value) }
            output.finish()
        }
        output.onTermination = { _ in forwarding.cancel() }
        return values
    }
}
