import BluewireCore
import BluewireHCI

extension HostEngine {
    /// Disables scanning and advertising and cancels a pending LE Create Connection, as one
    /// best-effort procedure (each command optional: "nothing to cancel" is the usual answer).
    /// Connections a previous program left up cannot be found through HCI.
    mutating func clearControllerLeftovers(_ id: HostRequestID) {
        guard phase == .running, let controller else { return complete(id, .failure(.notRunning)) }
        enqueue(id, .bestEffort, leftoverCommands(controller), optional: true)
    }

    /// Scan disable, advertising disable, LE Create Connection Cancel, in the controller's flavour
    /// (legacy or extended, Core Vol 4 Part E §7.8.11/§7.8.65, §7.8.9/§7.8.56, §7.8.13).
    func leftoverCommands(_ controller: ControllerInfo) -> [HCICommand] {
        [
            ScanCommands.stop(on: controller),
            controller.supportsExtendedAdvertising
                ? .leSetExtendedAdvertisingEnable(LESetExtendedAdvertisingEnable(enable: false, sets: []))
                : .leSetAdvertisingEnable(LESetAdvertisingEnable(enable: false)),
            .leCreateConnectionCancel,
        ]
    }
}
