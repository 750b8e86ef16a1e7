import BluewireCore
import BluewireGATT
import BluewireHCI

// # Known peers follow the scan
//
// A peer is known to the engine from the moment it has a connection state machine (Docs/Design.md):
// from its first `.connect`, its first `.reset`, or `.watch`, which makes one for a peer the application
// wants to follow before it connects (as `BluetoothHost` makes its peer record on `connect(to:)`,
// `reset(_:)` and `transitions(of:)`; `state(of:)` and scan results make none). It stays known for the
// engine's life.
//
// Every known peer in Disconnected.Initial takes part in a scan, as the table's Disconnected
// superstate has it: StartScan when the scan starts (or at once, when it becomes known while a scan
// runs), DeviceFound (Scanning's self-transition, emitted as `.stateChanged` like every other) each time
// the scan reports it, and the scan's end when the scan's machine takes it: StopScan, ScanCompleted
// after a duration, Failure with the scan's cause when the controller refused or failed the scan. A
// `.connect` while it scans takes it from Scanning to Connecting (the engine then stops the scan); a
// peer that is connected, connecting or in `Error` does not scan. Its transitions follow the scan's
// own (`.scanStateChanged`) in the outputs.

#if !BLUEWIRE_NO_CENTRAL

extension HostEngine {
    /// `.watch(address)`: `address` becomes known (see above); nothing changes for one known already.
    mutating func watchPeer(_ id: HostRequestID, _ address: BluetoothAddress) {
        knowPeer(address)
        complete(id, .success(.done))
    }

    /// Makes `address`'s machine if it has none; a new machine joins a running scan (StartScan). Every
    /// machine is made here (`fire` calls it on first use).
    mutating func knowPeer(_ address: BluetoothAddress) {
        guard peerMachines.index(forKey: address) == nil else { return }
        peerMachines[address] = PeerMachine()
        // Accepted: a new machine is in Disconnected.Initial, which takes StartScan. A scan exists
        // exactly while the scan's machine is in Scanning (HostEngine+ScanMachine).
        if scan != nil { fireExpected(.startScan, peer: address) }
    }

    /// After the scan's machine took `trigger`: the known peers take it too (see above).
    mutating func peersFollowScan(_ trigger: ConnectionTrigger, cause: HostEngineError?) {
        let from: ConnectionState
        switch trigger {
        case .startScan: from = .initial
        case .stopScan, .scanCompleted, .failure: from = .disconnected(.scanning)
        default: return
        }
        // The addresses first: firing replaces entries of the map being walked.
        var peers: [BluetoothAddress] = []
        for index in peerMachines.indices where peerMachines.values[index].machine.state == from {
            peers.append(peerMachines.keys[index])
        }
        for peer in peers {
            // Accepted: Initial takes StartScan; Scanning takes StopScan, ScanCompleted and Failure.
            fireExpected(trigger, peer: peer, cause: trigger == .failure ? cause : nil)
        }
    }

    /// The scan reported `device`: DeviceFound on its known, scanning machine, by the address it
    /// advertised from and by the identity that address resolves to (a bonded peer's machine is the
    /// identity's, as `.connect` by identity makes it).
    mutating func peerFound(_ device: DiscoveredDevice) {
        deviceFound(device.address)
        if let identity = device.identityAddress, identity != device.address { deviceFound(identity) }
    }

    private mutating func deviceFound(_ peer: BluetoothAddress) {
        // Accepted: Scanning's self-transition.
        if state(of: peer) == .disconnected(.scanning) { fireExpected(.deviceFound, peer: peer) }
    }
}

#else

extension HostEngine {
    /// No scan without the central role: a machine is made on first use and nothing else happens.
    mutating func knowPeer(_ address: BluetoothAddress) {}
    mutating func peersFollowScan(_ trigger: ConnectionTrigger, cause: HostEngineError?) {}
}

#endif  // !BLUEWIRE_NO_CENTRAL
