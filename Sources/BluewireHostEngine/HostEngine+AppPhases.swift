import BluewireCore
import BluewireGATT

// Left out of builds with BLUEWIRE_NO_CENTRAL (the peripheral firmware image): no GATT client.
#if !BLUEWIRE_NO_CENTRAL

// # GATT phases the application runs itself
//
// The engine moves the peer's `ConnectionStateMachine` (Docs/Design.md) for its own client procedures
// (HostEngine+ClientPhases). An application that runs a GATT procedure of its own over
// `GATTClientRequest.attRequest` (Discover Primary Service by Service UUID, Find Included Services,
// Discover All Characteristic Descriptors, Read Using Characteristic UUID, Reliable Writes: Core Vol 3
// Part G §4.4.2, §4.5.1, §4.7.1, §4.8.2, §4.9.5) puts it in a phase of the machine itself, as
// `BluetoothHost`'s `GATTClient.phase` does: `.beginGATTPhase` fires the phase's trigger (refused, with
// nothing changed, where the table refuses it), the application sends its requests, and
// `.endGATTPhase` fires OperationCompleted (the server answered, even with an Error Response: the
// bearer is usable) or Failure with a cause (the bearer is not). Every transition is emitted as
// `.stateChanged`.
//
// ## An application phase and the engine's procedures
//
// The table lets one phase run at a time: while the machine is in DiscoveringServices,
// DiscoveringCharacteristics, ReadingCharacteristic or WritingCharacteristic it accepts only
// OperationCompleted, Disconnect and Failure (ATT has one request outstanding per bearer, Part F
// §3.3.2). So, with no further bookkeeping:
//
// - `.beginGATTPhase` while an engine procedure (`.discoverAll`, `.read`, `.write`, `.subscribe`...)
//   is in its phase is refused with `.refused(state:trigger:)`, and the procedure goes on.
// - An engine procedure that reaches the head of the link's queue while an application phase is open
//   is refused with `.refused(state:trigger:)` and nothing of it is sent; the phase goes on. (The
//   engine does not hold it back until the phase ends: the application's own `.attRequest`s queue
//   behind it, so waiting would never end.)
// - Only the phase's owner ends it: the link remembers the application's open phase, and only
//   `.endGATTPhase` fires its OperationCompleted; the engine's procedures end only their own phases,
//   and those without a trigger (`.exchangeMTU`, `.attRequest`) end none.
// - The link may end the phase first: an `.attRequest` that timed out fires Failure with
//   `.att(.transactionTimeout)` (the bearer is unusable, §3.3.3), a Hardware Error or the transport's
//   end fires Failure, a disconnection fires Disconnect. `.endGATTPhase` then fires nothing and
//   completes with `.done` (or `.unknownConnection` once the link is gone), so each phase ends once.
//
// Links without a machine (the engine is peripheral and acts as GATT client too) are not checked, as
// for the engine's own procedures: both requests complete with `.done` and nothing moves.

/// The phase of the connection state machine an application's own GATT procedure runs in
/// (`HostRequest.beginGATTPhase`), named by the trigger that starts it (Docs/Design.md).
public enum ApplicationGATTPhase: Hashable, Sendable {
    /// Primary service discovery (Core Vol 3 Part G §4.4): DiscoverServices, from Connected.Idle,
    /// DiscoveredCharacteristic or NotificationsEnabled (a rediscovery forgets the subscriptions).
    case discoverServices
    /// Discovery within a service: included services, characteristics, descriptors (§4.5–4.7):
    /// DiscoverCharacteristics, from Connected.Idle or DiscoveredCharacteristic.
    case discoverCharacteristics
    /// A read (§4.8): Read, once a characteristic is discovered.
    case read
    /// A write (§4.9), reliable writes included: Write, once a characteristic is discovered.
    case write

    /// The trigger that starts the phase.
    public var trigger: ConnectionTrigger {
        switch self {
        case .discoverServices: .discoverServices
        case .discoverCharacteristics: .discoverCharacteristics
        case .read: .read
        case .write: .write
        }
    }
}

extension HostEngine {
    /// `.beginGATTPhase`: fires `phase`'s trigger on the link's peer machine and remembers the phase as
    /// the application's. Refused with `.refused` where the table refuses the trigger (nothing changes).
    mutating func beginApplicationPhase(_ id: HostRequestID, _ handle: UInt16, _ phase: ApplicationGATTPhase) {
        guard let index = links.index(forKey: handle) else { return complete(id, .failure(.unknownConnection(handle))) }
        guard let peer = links.values[index].machinePeer else { return complete(id, .success(.done)) }
        do throws(HostEngineError) {
            try fire(phase.trigger, peer: peer)
        } catch {
            return complete(id, .failure(error))
        }
        let entered = state(of: peer)
        links[handle]?.applicationPhase = entered
        // A new discovery forgets the subscriptions, as the table's DiscoverServices does.
        if phase == .discoverServices { links[handle]?.subscribedCharacteristics.removeAll() }
        complete(id, .success(.done))
    }

    /// `.endGATTPhase`: OperationCompleted (`failure` nil) or Failure with `failure` as the cause, on
    /// the phase the application began on this link; nothing when the link ended the phase first.
    mutating func endApplicationPhase(_ id: HostRequestID, _ handle: UInt16, failure: HostEngineError?) {
        guard let index = links.index(forKey: handle) else { return complete(id, .failure(.unknownConnection(handle))) }
        guard let peer = links.values[index].machinePeer else { return complete(id, .success(.done)) }
        let trigger: ConnectionTrigger = failure == nil ? .operationCompleted : .failure
        guard let phase = links.values[index].applicationPhase else {
            // No phase of the application's is open on this link: the engine's would be ended, or none.
            return complete(id, .failure(.refused(state: state(of: peer), trigger: trigger)))
        }
        links[handle]?.applicationPhase = nil
        // The link ended the phase already (Failure, Reset after it): nothing more to fire.
        guard state(of: peer) == phase else { return complete(id, .success(.done)) }
        do throws(HostEngineError) {
            // Accepted: the machine is still in the phase's state (only this request leaves it while the
            // link lives, see above), which takes both OperationCompleted and Failure.
            try fire(trigger, peer: peer, cause: failure)
            complete(id, .success(.done))
        } catch {
            complete(id, .failure(error))
        }
    }
}

#endif  // !BLUEWIRE_NO_CENTRAL
