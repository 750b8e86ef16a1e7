import BluewireCore

extension CaptureSummary {
    /// One count of the summary under its `INDEX.json` key.
    public enum Value: Sendable, Equatable {
        case count(Int)
        /// Keys formatted like "0x0d" (lower-case, two digits), in increasing order.
        case histogram([Bucket])
    }

    /// One histogram entry.
    public struct Bucket: Sendable, Equatable {
        public var key: String
        public var count: Int
    }

    /// The summary as (key, value) pairs, under the keys of `INDEX.json`'s `tshark` objects and in that
    /// order. `malformed_frames` (a dissector opinion, not a count of anything in the file) and
    /// `hci_mon_opcode_hist` are not produced.
    public var fields: [(key: String, value: Value)] {
        [
            ("frames", .count(frames)),
            ("hci_cmd_frames", .count(hciCommandFrames)),
            ("hci_evt_frames", .count(hciEventFrames)),
            ("hci_acl_frames", .count(hciACLFrames)),
            ("hci_sco_frames", .count(hciSCOFrames)),
            ("le_meta_subevent_hist", .histogram(CaptureSummary.buckets(leMetaSubevents))),
            ("le_adv_report_frames", .count(leAdvertisingReportFrames)),
            ("le_adv_reports_total", .count(leAdvertisingReportsTotal)),
            ("le_ext_adv_report_frames", .count(leExtendedAdvertisingReportFrames)),
            ("le_ext_adv_reports_total", .count(leExtendedAdvertisingReportsTotal)),
            ("le_conn_complete_events", .count(leConnectionCompleteEvents)),
            ("le_conn_complete_ok", .count(leConnectionCompleteOK)),
            ("classic_conn_complete_events", .count(classicConnectionCompleteEvents)),
            ("classic_conn_complete_ok", .count(classicConnectionCompleteOK)),
            ("disconnection_complete", .count(disconnectionComplete)),
            ("le_data_length_change", .count(leDataLengthChange)),
            ("le_phy_update_complete", .count(lePHYUpdateComplete)),
            ("att_frames", .count(attFrames)),
            ("att_opcode_hist", .histogram(CaptureSummary.buckets(attOpcodes))),
            ("smp_frames", .count(smpFrames)),
            ("l2cap_le_signaling_frames", .count(l2capLESignalingFrames)),
        ]
    }

    static func buckets(_ histogram: ByteHistogram) -> [Bucket] {
        histogram.entries.map { Bucket(key: "0x" + hex($0.value, width: 2), count: $0.count) }
    }

    /// The summary as one JSON object, keys in `fields` order.
    public var json: String {
        var writer = JSONWriter()
        writeJSON(to: &writer)
        return writer.text
    }

    /// Writes the summary object into `writer`.
    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        for (key, value) in fields {
            writer.key(key)
            switch value {
            case .count(let count):
                writer.integer(count)
            case .histogram(let buckets):
                writer.beginObject()
                for bucket in buckets { writer.field(bucket.key, bucket.count) }
                writer.endObject()
            }
        }
        writer.endObject()
    }
}
