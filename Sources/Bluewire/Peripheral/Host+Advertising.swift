import BluewireCore
import BluewireHCI

extension BluetoothHost {
    /// Starts advertising `advertisement` (replacing what was advertised before) and returns the
    /// plan in use: legacy or extended commands as the controller supports them, own address type
    /// random (the Host's random static address, Core Vol 6 Part B §1.3.2.1).
    ///
    /// Connectable advertising stops when a central connects (Core Vol 4 Part E §7.8.9, and for an
    /// advertising set §7.7.65.18): the Host starts it again at once while the advertisement allows
    /// more centrals (`advertisesWhileConnected`, `maximumConnections`), and otherwise when a central
    /// disconnects. A controller that cannot advertise while connected refuses the restart; the Host
    /// then waits for a disconnection.
    ///
    /// Fails before sending anything when the data does not fit the PDUs chosen; fails with the
    /// command's status when the controller refuses one.
    @discardableResult
    public func startAdvertising(_ advertisement: Advertisement) async throws(PeripheralError) -> AdvertisingPlan {
        guard phase == .running, let controller else { throw .host(.notRunning) }
        let plan = try AdvertisingPlan(advertisement, controller: controller)
        await acquireAdvertising()
        defer { releaseAdvertising() }
        if peripheral.advertising.isEnabled, let old = peripheral.advertising.plan {
            _ = await sendCommandResult(old.disable)
            peripheral.advertising.isEnabled = false
        }
        peripheral.advertising.advertisement = nil
        peripheral.advertising.plan = nil
        for command in plan.configuration {
            if case .failure(let error) = await sendCommandResult(command) { throw .host(.command(error)) }
        }
        peripheral.advertising.advertisement = advertisement
        peripheral.advertising.plan = plan
        guard advertisingAllowed(advertisement) else { return plan }
        if case .failure(let error) = await sendCommandResult(plan.enable) { throw .host(.command(error)) }
        peripheral.advertising.isEnabled = true
        log.hci.debug("advertising", metadata: ["kind": "\(plan.kind)", "connectable": "\(plan.isConnectable)"])
        publishPeripheral(.advertisingStarted(plan.kind))
        return plan
    }

    /// Stops advertising; it does not resume after connections or disconnections until the next
    /// `startAdvertising`.
    public func stopAdvertising() async throws(PeripheralError) {
        guard phase == .running else { throw .host(.notRunning) }
        await acquireAdvertising()
        defer { releaseAdvertising() }
        let plan = peripheral.advertising.plan
        peripheral.advertising.advertisement = nil
        peripheral.advertising.plan = nil
        guard let plan, peripheral.advertising.isEnabled else { return }
        peripheral.advertising.isEnabled = false
        publishPeripheral(.advertisingStopped)
        if case .failure(let error) = await sendCommandResult(plan.disable) { throw .host(.command(error)) }
    }

    /// Whether the controller is advertising, as far as the Host knows.
    public var isAdvertising: Bool { peripheral.advertising.isEnabled }

    /// The plan of the advertisement in force (nil when none was started or it was stopped).
    public var advertisingPlan: AdvertisingPlan? { peripheral.advertising.plan }

    /// Whether the advertisement may be on now, given the centrals connected.
    func advertisingAllowed(_ advertisement: Advertisement) -> Bool {
        guard advertisement.isConnectable else { return true }
        let centrals = peripheral.centrals.count
        if centrals > 0 && !advertisement.advertisesWhileConnected { return false }
        if let maximum = advertisement.maximumConnections, centrals >= maximum { return false }
        return true
    }

    /// Turns advertising back on if it is wanted, allowed and off (after a connection stopped it, or
    /// a central left).
    func resumeAdvertising() async {
        await acquireAdvertising()
        defer { releaseAdvertising() }
        guard phase == .running, !peripheral.advertising.isEnabled,
              let advertisement = peripheral.advertising.advertisement, let plan = peripheral.advertising.plan,
              advertisingAllowed(advertisement) else { return }
        switch await sendCommandResult(plan.enable) {
        case .success:
            peripheral.advertising.isEnabled = true
            publishPeripheral(.advertisingStarted(plan.kind))
        case .failure(let error):
            // Typically Command Disallowed: this controller cannot advertise in its current state
            // (connected as peripheral). The next disconnection tries again.
            log.hci.debug("advertising not resumed: \(error)")
        }
    }

    /// A central connected: connectable advertising has stopped in the controller.
    func advertisingConnectionCreated() {
        guard let plan = peripheral.advertising.plan, plan.isConnectable, peripheral.advertising.isEnabled else { return }
        peripheral.advertising.isEnabled = false
        publishPeripheral(.advertisingStopped)
        Task { await self.resumeAdvertising() }
    }

    /// The controller ended the advertising set for a reason other than a connection (duration or
    /// event count reached, Core Vol 4 Part E §7.7.65.18); a connection is handled by
    /// `advertisingConnectionCreated`, whichever of the two events comes first.
    func advertisingSetTerminated(status: HCIStatus) {
        guard !status.isSuccess, peripheral.advertising.plan?.usesExtendedCommands == true,
              peripheral.advertising.isEnabled else { return }
        peripheral.advertising.isEnabled = false
        publishPeripheral(.advertisingStopped)
    }

    func acquireAdvertising() async {
        guard peripheral.advertising.busy else {
            peripheral.advertising.busy = true
            return
        }
        await withCheckedContinuation { continuation in peripheral.advertising.waiters.append(continuation) }
    }

    func releaseAdvertising() {
        if peripheral.advertising.waiters.isEmpty {
            peripheral.advertising.busy = false
        } else {
            peripheral.advertising.waiters.removeFirst().resume()
        }
    }
}
