import BluewireCore

/// An in-process LE controller: HCI packets from a host go in, HCI packets for the host come out.
///
/// It implements what a BLE host needs end to end: reset and the informational commands, event masks
/// (masked events are never sent), legacy and extended advertising and scanning (with scan responses
/// and duplicate filtering), connections in both roles, disconnection, connection update, data length,
/// PHY update, remote version and features, and ACL data with LE buffer flow control and Number Of
/// Completed Packets. It follows the Core specification where bumble's controller cuts corners (see
/// `Configuration` for the knobs that mimic bumble instead).
///
/// Every controller belongs to a `VirtualLink` (a standalone one gets a link of its own), which carries
/// its radio traffic to the other controllers and runs on the link's `TestClock`. Output waits in an
/// outbox for `takeOutput()` (or whatever `receive(hostPacket:)` returns), unless an output handler is set,
/// as `VirtualTransport` does.
public final class VirtualController: Sendable {
    /// The link this controller's radio is on.
    public let link: VirtualLink
    /// Position on the link (the order controllers were added).
    public let index: Int
    public let configuration: Configuration

    init(link: VirtualLink, index: Int, configuration: Configuration) {
        self.link = link
        self.index = index
        self.configuration = configuration
    }

    /// A controller alone on its own link (and clock): for tests of commands that need no peer.
    public convenience init(configuration: Configuration, clock: TestClock = TestClock()) {
        let link = VirtualLink(clock: clock)
        let index = link.withWorld { $0.addController(configuration) }
        self.init(link: link, index: index, configuration: configuration)
    }

    /// The public device address.
    public var publicAddress: BluetoothAddress { configuration.publicAddress }

    /// Processes one packet from the host (a command or ACL data) and returns everything waiting for the
    /// host afterwards. Effects on other controllers go to their own outboxes; effects that take time
    /// arrive when the clock is advanced. Returns nothing when an output handler is set.
    @discardableResult
    public func receive(hostPacket: HCIPacket) -> [HCIPacket] {
        link.withWorld { world in
            world.receive(hostPacket, from: index)
            return Self.drain(world.controllers[index])
        }
    }

    /// Everything the controller has sent its host since the last call, oldest first.
    public func takeOutput() -> [HCIPacket] {
        link.withWorld { Self.drain($0.controllers[index]) }
    }

    private static func drain(_ c: ControllerState) -> [HCIPacket] {
        defer { c.outbox = [] }
        return c.outbox
    }

    /// Sends every packet for the host to `handler` as it is produced (first anything already waiting),
    /// instead of keeping it for `takeOutput()`; nil goes back to the outbox. The handler runs with the
    /// link locked: it must not call into the link (a continuation's `yield` is the intended use).
    public func setOutputHandler(_ handler: (@Sendable (HCIPacket) -> Void)?) {
        link.withWorld { world in
            let c = world.controllers[index]
            c.sink = handler
            if let handler {
                for packet in Self.drain(c) { handler(packet) }
            }
        }
    }

    /// Faults currently switched on (see `Faults`).
    public var faults: Faults {
        get { link.withWorld { $0.controllers[index].faults } }
        set { link.withWorld { $0.controllers[index].faults = newValue } }
    }

    /// Every rule the host has broken so far, in order.
    public var violations: [HostViolation] {
        link.withWorld { $0.controllers[index].violations }
    }

    /// ACL packets that reached this controller on a handle it had already ended, before its host can
    /// have seen the Disconnection Complete (the race every host has with the controller; see
    /// `LateACLPacket`), in arrival order. They were dropped, as a controller drops them.
    public var lateACLPackets: [LateACLPacket] {
        link.withWorld { $0.controllers[index].lateACLPackets }
    }

    /// Called (with the link locked) on every host violation, e.g. `{ Issue.record("\($0)") }` in a test.
    public func setViolationHandler(_ handler: (@Sendable (HostViolation) -> Void)?) {
        link.withWorld { $0.controllers[index].violationHandler = handler }
    }

    /// Sends Hardware Error (Core Vol 4 Part E §7.7.16) with this code, if the event mask allows it.
    public func injectHardwareError(code: UInt8) {
        link.withWorld { $0.controllers[index].sendEvent(EventCode.hardwareError, [code]) }
    }

    /// Loses every connection of this controller now, as if the peer went out of range: both sides get
    /// Disconnection Complete with Connection Timeout when the supervision timeout has passed.
    public func loseAllLinks() {
        link.withWorld { world in
            let c = world.controllers[index]
            for id in c.connections.values.sorted() {
                if let connection = world.connections[id] { world.loseLink(connection) }
            }
        }
    }

    /// The connection handles this controller has open, ascending.
    public var connectionHandles: [UInt16] {
        link.withWorld { $0.controllers[index].connections.keys.sorted() }
    }

    /// LE ACL buffers currently holding host packets not yet reported completed.
    public var aclBuffersInUse: Int {
        link.withWorld { $0.controllers[index].aclBuffersInUse }
    }

    /// The random address set by LE Set Random Address, if any.
    public var randomAddress: BluetoothAddress? {
        link.withWorld { $0.controllers[index].randomAddress }
    }
}
