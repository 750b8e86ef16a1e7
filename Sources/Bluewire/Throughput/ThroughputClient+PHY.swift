import BluewireCore
import BluewireHCI

extension ThroughputClient {
    /// Asks for `phys` both ways (LE Set PHY, Core Vol 4 Part E §7.8.49) and waits, at most
    /// `timeout` on the Host's clock, for LE PHY Update Complete. Returns the PHYs then in force
    /// (transmit, receive: 1 = LE 1M, 2 = LE 2M, 3 = LE Coded), or nil when the controller refused,
    /// did not answer, or the link layer did not change anything in time: the run goes on with
    /// whatever PHY the link has.
    func requestPHY(_ phys: LEPHYSet, timeout: TimeSpan = .seconds(2)) async -> (tx: UInt8, rx: UInt8)? {
        let host = connection.host, handle = connection.handle
        // Subscribed before the command goes out, so the update cannot slip past.
        let events = await host.events()
        do {
            try await connection.requestPHY(tx: phys, rx: phys, timeout: timeout)
        } catch {
            return nil
        }
        let clock = host.clock
        let deadline = clock.now + timeout
        return await withTaskGroup(of: (tx: UInt8, rx: UInt8)?.self) { group in
            group.addTask {
                for await event in events {
                    if case .phyUpdated(handle, let tx, let rx) = event { return (tx, rx) }
                }
                return nil
            }
            group.addTask {
                try? await clock.sleep(until: deadline)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// The PHYs in force on the link (LE Read PHY, Core Vol 4 Part E §7.8.47), or nil if the
    /// controller does not say.
    func readPHY() async -> (tx: UInt8, rx: UInt8)? {
        let handle = connection.handle
        guard let response = try? await connection.host.send(.leReadPHY(ConnectionHandleParameter(connectionHandle: handle))),
              let phys = try? response.returnParameters(LEReadPHYReturn.self, opcode: .leReadPHY),
              phys.status.isSuccess else { return nil }
        return (phys.txPHY, phys.rxPHY)
    }
}
