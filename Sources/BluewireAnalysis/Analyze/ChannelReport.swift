import BluewireCore

/// How `analyze` shows a credit based channel: SPSM, CIDs, MTU/MPS each way, credits, traffic.
extension CreditBasedChannelTracker.Channel {
    /// The SPSM's name where the Assigned Numbers give one.
    var psmName: String {
        switch psm {
        case 0x0023: "IPSP"
        case 0x0025: "OTS"
        case 0x0027: "EATT"
        case 0x0080...0x00FF: "dynamic"
        default: "SIG"
        }
    }

    /// Two lines, indented under their connection.
    var text: String {
        var out = "  channel SPSM 0x" + hex(psm, width: 4) + " (\(psmName)" + (enhanced ? ", enhanced" : "") + "), "
        out += "local CID 0x" + hex(localCID, width: 4) + " ↔ remote 0x" + hex(remoteCID, width: 4)
        out += ", opened by " + (openedLocally ? "local" : "peer") + " at record \(openedAtRecord)"
        out += closedAtRecord.map { ", closed at record \($0)" } ?? ", open at end"
        out += "\n    MTU/MPS local \(localMTU)/\(localMPS), peer \(remoteMTU)/\(remoteMPS); credits given \(creditsGiven), "
            + "received \(creditsReceived); sent \(sdusSent) SDUs (\(octetsSent) B, \(kFramesSent) K-frames), "
            + "received \(sdusReceived) SDUs (\(octetsReceived) B, \(kFramesReceived) K-frames)\n"
        return out
    }

    func writeJSON(to w: inout JSONWriter) {
        w.beginObject()
        w.field("spsm", "0x" + hex(psm, width: 4))
        w.field("spsm_name", psmName)
        w.key("enhanced")
        w.bool(enhanced)
        w.field("local_cid", "0x" + hex(localCID, width: 4))
        w.field("remote_cid", "0x" + hex(remoteCID, width: 4))
        w.key("opened_locally")
        w.bool(openedLocally)
        w.field("opened_at_record", openedAtRecord)
        w.key("closed_at_record")
        if let closedAtRecord { w.integer(closedAtRecord) } else { w.null() }
        w.field("local_mtu", Int(localMTU))
        w.field("local_mps", Int(localMPS))
        w.field("peer_mtu", Int(remoteMTU))
        w.field("peer_mps", Int(remoteMPS))
        w.field("credits_given", creditsGiven)
        w.field("credits_received", creditsReceived)
        w.field("sdus_sent", sdusSent)
        w.field("octets_sent", octetsSent)
        w.field("k_frames_sent", kFramesSent)
        w.field("sdus_received", sdusReceived)
        w.field("octets_received", octetsReceived)
        w.field("k_frames_received", kFramesReceived)
        w.endObject()
    }
}
