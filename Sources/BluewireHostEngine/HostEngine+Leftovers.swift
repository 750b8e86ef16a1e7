import BluewireCore
import BluewireHCI

extension HostEngine {
    /// Disables scanning and advertising and cancels a pending LE Create Connection, as one
    /// best-effort procedure (each command optional: "nothing to cancel" is the usual answer).
    /// Connections a previous program left up cannot be found through HCI.
    mutating func clearControllerLeftovers(_ id: HostRequestID) {
        guard phase == .running, let controller else { return complete(id, .failure(.notRunning)) }
        let commands: [HCICommand] = [
            ScanCommands.stop(on: controller),
            controller.supportsExtendedAdvertising
                ? .leSetExtendedAdvertisingEnable(LESetExtendedAdvertisingEnable(enable: false, sets: []))
                : .leSetAdvertisingEnable(LESetAdvertisingEnable(enable: false)),
            .leCreateConnectionCancel,
        ]
        enqueue(id, .bestEffort, commands, optional: true)
    }
}
