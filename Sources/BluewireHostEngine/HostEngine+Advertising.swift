import BluewireCore
import BluewireHCI

/// Advertising as the application asked for it and as the controller does it.
struct AdvertisingState: Hashable, Sendable {
    /// What to advertise, kept to resume after a disconnection; nil after stop.
    var advertisement: HostAdvertisement?
    var commands: AdvertisingCommands?
    /// Counts the starts: a start procedure carries its number, which tells when it finishes whether
    /// the advertising it configured is still the one in force (a number, not the commands, so the
    /// procedure queue holds no copy of them and comparing costs no HCI command equality).
    var generation: UInt32 = 0
    /// Advertising is on in the controller.
    var isEnabled = false
    /// An enable is on its way; a Connection Complete before its answer means the advertising it
    /// started has ended already (§7.8.9: a connection stops connectable legacy advertising).
    var enabling = false
    /// The random address the controller holds when advertising changed it (a private address on a
    /// legacy controller, LE Set Random Address); nil while it is the static one from bring-up.
    var controllerRandomAddress: BluetoothAddress?
}

extension HostEngine {
    /// Parameters, data, scan response, enable (disabling what runs first). Fails without a
    /// command when the data do not fit.
    mutating func startAdvertising(_ id: HostRequestID?, _ advertisement: HostAdvertisement) {
        guard phase == .running, let controller else { return complete(id, .failure(.notRunning)) }
        let commands: AdvertisingCommands
        do throws(HostEngineError) {
            commands = try AdvertisingCommands(advertisement, controller: controller, ownAddress: privateAdvertisingAddress())
        } catch {
            return complete(id, .failure(error))
        }
        var list: [ProcedureCommand] = []
        if advertising.isEnabled || advertising.enabling, let old = advertising.commands {
            list.append(ProcedureCommand(command: old.disable, optional: true))
            if advertising.isEnabled { emit(.advertisingStopped) }
            advertising.isEnabled = false
        }
        for command in commands.configuration { list.append(ProcedureCommand(command: command, optional: false)) }
        if !commands.usesExtendedCommands, let address = commands.ownAddress { advertising.controllerRandomAddress = address }
        advertising.advertisement = advertisement
        advertising.commands = commands
        advertising.generation &+= 1
        let enables = advertisingAllowed(advertisement)
        if enables {
            list.append(ProcedureCommand(command: commands.enable, optional: false))
            advertising.enabling = true
        }
        enqueue(ControllerProcedure(id: id, kind: .startAdvertising(generation: advertising.generation, enables: enables), commands: list))
    }

    /// Disable advertising (queued behind a start asked before it).
    mutating func stopAdvertising(_ id: HostRequestID) {
        guard phase == .running else { return complete(id, .failure(.notRunning)) }
        let commands = advertising.commands
        advertising.advertisement = nil
        advertising.commands = nil
        guard let commands, advertising.isEnabled || advertising.enabling else {
            return complete(id, .success(.done))
        }
        if advertising.isEnabled { emit(.advertisingStopped) }
        advertising.isEnabled = false
        advertising.enabling = false
        enqueue(id, .stopAdvertising, [commands.disable], optional: true)
    }

    /// A connectable advertisement pauses while a central is connected unless asked otherwise.
    func advertisingAllowed(_ advertisement: HostAdvertisement) -> Bool {
        guard advertisement.isConnectable else { return true }
        // Counted by index: `filter` would copy every link, with all it holds, into a new array.
        var centrals = 0
        for index in links.indices where links.values[index].role == .peripheral { centrals += 1 }
        if let maximum = advertisement.maximumConnections, centrals >= maximum { return false }
        return centrals == 0 || advertisement.advertisesWhileConnected
    }

    /// How the advertisement in force goes on the air (nil when none was started or it was stopped):
    /// what an application shows a user, e.g. `bluewire serve`'s first line.
    public var advertisingLayout: HostAdvertisingLayout? { advertising.commands?.layout }

    /// The last command of a start was answered.
    mutating func advertisingConfigured(generation: UInt32, enables: Bool) {
        // `case .some`, not `!= nil`: on an Equatable type the optimiser may keep the derived `==`,
        // which compares every HCI command of both (kilobytes of firmware code).
        guard enables, case .some = advertising.commands, advertising.generation == generation else { return }
        advertisingEnableAnswered()
    }

    mutating func advertisingEnableAnswered() {
        // Overtaken: stopped meanwhile, or a connection already ended this advertising.
        guard advertising.enabling else { return }
        advertising.enabling = false
        advertising.isEnabled = true
        emit(.advertisingStarted)
    }

    /// A central connected to us: connectable advertising has stopped (§7.8.9 / §7.7.65.18).
    mutating func advertisingConnectionCreated() {
        guard let commands = advertising.commands, commands.isConnectable else { return }
        let wasOn = advertising.isEnabled || advertising.enabling
        advertising.enabling = false
        advertising.isEnabled = false
        if wasOn { emit(.advertisingStopped) }
        resumeAdvertising()
    }

    /// Advertise again if the application still wants to and it is allowed now (after a
    /// disconnection, or right after a connection when advertising while connected).
    mutating func resumeAdvertising() {
        guard phase == .running, !advertising.isEnabled, !advertising.enabling,
              let advertisement = advertising.advertisement, let commands = advertising.commands,
              advertisingAllowed(advertisement) else { return }
        // The private address was replaced while advertising was paused: configure it again.
        if advertisingAddressReplaced { return startAdvertising(nil, advertisement) }
        advertising.enabling = true
        // Typically Command Disallowed on a controller that cannot advertise while connected:
        // the next disconnection tries again.
        enqueue(nil, .resumeAdvertising, [commands.enable])
    }

    /// LE Advertising Set Terminated (§7.7.65.18) with an error: the extended set has stopped.
    mutating func advertisingSetTerminated(status: HCIStatus) {
        guard !status.isSuccess, advertising.commands?.usesExtendedCommands == true, advertising.isEnabled else { return }
        advertising.isEnabled = false
        emit(.advertisingStopped)
    }
}
