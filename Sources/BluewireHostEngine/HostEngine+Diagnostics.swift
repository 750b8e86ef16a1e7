import BluewireCore
import BluewireGATT
import BluewireL2CAP

// Read-only counts over what the engine holds, for a host's diagnostics (fault-injection tests prove
// with them that a link's end leaves nothing behind). They read existing state only; an image that
// never calls them (the firmware) drops them.
extension HostEngine {
    /// ACL data packets handed to the controller on `connection` and not yet reported by Number Of
    /// Completed Packets (Core Vol 4 Part E §4.1.1, §7.7.19): the controller buffers they hold.
    public func aclPacketsInFlight(connection: UInt16) -> Int { aclCredits.inFlightCount(handle: connection) }

    /// ACL data packets in flight on every handle (at most LE Read Buffer Size's
    /// Total_Num_LE_ACL_Data_Packets, §7.8.2).
    public var aclPacketsInFlight: Int { aclCredits.inFlight.values.reduce(0, +) }

    /// Whether an L2CAP PDU is partly received on `connection`: its first fragment came, the rest of
    /// the length its Basic header declared has not (Core Vol 3 Part A §7.2.2).
    public func isReassemblingL2CAPPDU(connection: UInt16) -> Bool { reassembler.isReassembling(handle: connection) }

    /// Handles (links or not) with an L2CAP PDU partly received.
    public var partialL2CAPPDUs: Int { reassembler.partialPDUCount }

    /// Raw HCI commands (`HostRequest.command`) sent or waiting for a command credit, not answered yet.
    public var pendingRawCommands: Int { rawCommands.count }


    /// Indications of the local GATT server on `connection`: the one waiting for the client's Handle
    /// Value Confirmation (one at a time, Core Vol 3 Part F §3.4.7.2) and those queued behind it.
    public func pendingIndications(connection: UInt16) -> Int {
        (server.indicationOutstanding(on: connection) ? 1 : 0) + server.queuedIndicationCount(for: connection)
    }

    /// Indications of the local GATT server pending on every link.
    public var pendingIndications: Int {
        var total = 0
        for handle in links.keys { total += pendingIndications(connection: handle) }
        return total
    }

    /// GATT client operations of this device on `connection` not finished yet: the one whose ATT
    /// request is outstanding (one per bearer, Core Vol 3 Part F §3.3.2) and those queued behind it,
    /// on the ATT bearer and on the link's Enhanced ATT bearers. The engine's own (a Client Supported
    /// Features write) count too.
    public func pendingClientRequests(connection: UInt16) -> Int {
        guard let index = links.index(forKey: connection) else { return 0 }
        var count = links.values[index].clientOperations.count
        #if !BLUEWIRE_NO_CHANNELS
        let channels = links.values[index].channels
        for operations in channels.eattClientOperations.values { count += operations.count }
        count += channels.sharedEATTOperations.count
        #endif
        return count
    }

    /// GATT client operations not finished yet on every link.
    public var pendingClientRequests: Int {
        var total = 0
        for handle in links.keys { total += pendingClientRequests(connection: handle) }
        return total
    }
}
