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
        if let engineHost { return try await engineStartAdvertising(engineHost, advertisement) }
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
        if case .failure(let error) = await enableAdvertising(plan) { throw .host(.command(error)) }
        log.hci.debug("advertising", metadata: ["kind": "\(plan.kind)", "connectable": "\(plan.isConnectable)"])
        return plan
    }

    /// Stops advertising; it does not resume after connections or disconnections until the next
    /// `startAdvertising`.
    public func stopAdvertising() async throws(PeripheralError) {
        if let engineHost { return try await engineStopAdvertising(engineHost) }
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

    /// The address centrals see: the Host's random static address (advertising uses own address
    /// type random). Nil before `start()`.
    public var advertisingAddress: BluetoothAddress? { controller?.randomAddress }

    /// Whether the controller is advertising, as far as the Host knows.
    public var isAdvertising: Bool {
        if let engineHost { return engineIsAdvertising(engineHost) }
        return peripheral.advertising.isEnabled
    }

    /// The plan of the advertisement in force (nil when none was started or it was stopped).
    public var advertisingPlan: AdvertisingPlan? {
        if let engineHost { return engineAdvertisingPlan(engineHost) }
        return peripheral.advertising.plan
    }

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
        switch await enableAdvertising(plan) {
        case .success:
            break
        case .failure(let error):
            // Typically Command Disallowed: this controller cannot advertise in its current state
            // (connected as peripheral). The next disconnection tries again.
            log.hci.debug("advertising not resumed: \(error)")
        }
    }

    /// Sends the plan's enable command and records that advertising is on.
    ///
    /// A central can connect as soon as the controller starts advertising: its LE Connection
    /// Complete may follow the enable's Command Complete so closely that the Host handles it before
    /// this task resumes. `advertisingStartedBeforeConnection` then reports the start (the Command
    /// Complete came first) and the stop, so the events come in the controller's order whichever
    /// runs first, and this task must not report advertising on again.
    func enableAdvertising(_ plan: AdvertisingPlan) async -> Result<CommandResponse, CommandError> {
        peripheral.advertising.enabling = plan
        let result = await sendCommandResult(plan.enable)
        let overtaken = peripheral.advertising.enabling == nil
        peripheral.advertising.enabling = nil
        if case .success = result, !overtaken {
            peripheral.advertising.isEnabled = true
            publishPeripheral(.advertisingStarted(plan.kind))
        }
        return result
    }

    /// A central connected while an enable command was in flight: its Command Complete came first on
    /// the wire, so advertising did start (and has stopped again, see `advertisingConnectionCreated`).
    func advertisingStartedBeforeConnection() {
        guard let plan = peripheral.advertising.enabling, plan.isConnectable else { return }
        peripheral.advertising.enabling = nil
        peripheral.advertising.isEnabled = true
        publishPeripheral(.advertisingStarted(plan.kind))
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
