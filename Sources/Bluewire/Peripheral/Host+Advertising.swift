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
        try await engineStartAdvertising(engineHost, advertisement)
    }

    /// Stops advertising; it does not resume after connections or disconnections until the next
    /// `startAdvertising`.
    public func stopAdvertising() async throws(PeripheralError) {
        try await engineStopAdvertising(engineHost)
    }

    /// The address centrals see: the Host's random static address (advertising uses own address
    /// type random). Nil before `start()`.
    public var advertisingAddress: BluetoothAddress? { controller?.randomAddress }

    /// Whether the controller is advertising, as far as the Host knows.
    public var isAdvertising: Bool {
        engineIsAdvertising(engineHost)
    }

    /// The plan of the advertisement in force (nil when none was started or it was stopped).
    public var advertisingPlan: AdvertisingPlan? {
        engineAdvertisingPlan(engineHost)
    }
}
