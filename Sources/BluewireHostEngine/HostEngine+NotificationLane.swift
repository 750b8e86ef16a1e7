import BluewireATT
import BluewireCore

/// A Handle Value Notification or Indication from a peer's server (Core Vol 3 Part F §3.4.7), as the
/// engine hands it out: the value is a slice of the packet it arrived in. Indications are confirmed
/// by the engine already (§3.4.7.2).
public struct HostNotification: Hashable, Sendable {
    /// The link it came on.
    public var connection: UInt16
    /// The attribute's handle (a characteristic value handle).
    public var attribute: UInt16
    /// The value, as sent (at most ATT_MTU − 3 octets, §3.4.7.1).
    public var value: ArraySlice<UInt8>
    /// True for an indication.
    public var isIndication: Bool

    public init(connection: UInt16, attribute: UInt16, value: ArraySlice<UInt8>, isIndication: Bool) {
        self.connection = connection
        self.attribute = attribute
        self.value = value
        self.isIndication = isIndication
    }
}

/// The notification lane: a stream of notifications is what a central receives most, so while no
/// other output is waiting a notification goes into a queue of its own, of small values, instead of
/// the queue of `HostEngineOutput`s (an enum as large as its largest case, copied several times on
/// its way out). Order is kept: a notification joins the lane only while `outputs` is empty, so
/// everything in the lane came before everything in `outputs`, and `nextOutput` hands out the lane
/// first. A shell that takes the lane with `nextNotification` before each `nextOutput` sees exactly
/// the order `nextOutput` alone gives.
extension HostEngine {
    /// The next notification on the lane, or nil when the lane is empty (the next output, if any, is
    /// then something else, or a notification that arrived behind one: `nextOutput` has it). Call it
    /// until nil before each `nextOutput` to keep the order.
    public mutating func nextNotification() -> HostNotification? {
        #if BLUEWIRE_NO_CENTRAL
        // Without the central role nothing notifies this host; the lane is not compiled.
        return nil
        #else
        return notifications.takeFront(
            at: &notificationHead, leaving: HostNotification(connection: 0, attribute: 0, value: [], isIndication: false))
        #endif
    }

    /// Every notification on the lane, in order, in `batch` (emptied first; its capacity is kept,
    /// and the lane and `batch` trade storage, so a shell that reuses `batch` allocates nothing in
    /// steady state): what `nextNotification` until nil gives, in one call. Take the lane this way
    /// until it stays empty before each `nextOutput`, to keep the order.
    public mutating func takeNotifications(into batch: inout [HostNotification]) {
        batch.removeAll(keepingCapacity: true)
        #if !BLUEWIRE_NO_CENTRAL
        guard notificationHead < notifications.count else { return }
        if notificationHead == 0 {
            swap(&batch, &notifications)
        } else {
            batch.append(contentsOf: notifications[notificationHead...])
            notifications.removeAll(keepingCapacity: true)
        }
        notificationHead = 0
        #endif
    }

    /// A notification or indication for the application: on the lane while no other output waits,
    /// else behind the outputs already queued.
    mutating func emitNotification(connection: UInt16, attribute: UInt16, value: ArraySlice<UInt8>, isIndication: Bool) {
        #if BLUEWIRE_NO_CENTRAL
        emit(.notification(connection: connection, attribute: attribute, value: value, isIndication: isIndication))
        #else
        if outputHead == outputs.count {
            notifications.append(HostNotification(connection: connection, attribute: attribute, value: value, isIndication: isIndication))
        } else {
            emit(.notification(connection: connection, attribute: attribute, value: value, isIndication: isIndication))
        }
        #endif
    }
}
