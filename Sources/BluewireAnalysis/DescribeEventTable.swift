import BluewireCore

/// An HCI event or LE Meta subevent as the describer knows it: its Core specification name and
/// the layout of its parameters (Core Vol 4 Part E §7.7).
struct EventLayout: Sendable {
    let code: UInt8
    let name: String
    let parameters: [Parameter]

    init(_ code: UInt8, _ name: String, _ parameters: [Parameter] = []) {
        self.code = code
        self.name = name
        self.parameters = parameters
    }
}

/// Every event of the Core specification, by event code (§7.7).
enum EventTable {
    static let byCode: [UInt8: EventLayout] = {
        var table: [UInt8: EventLayout] = [:]
        for layout in events { table[layout.code] = layout }
        return table
    }()

    static let bySubevent: [UInt8: EventLayout] = {
        var table: [UInt8: EventLayout] = [:]
        for layout in leSubevents1 + leSubevents2 { table[layout.code] = layout }
        return table
    }()

    /// `Disconnection Complete (0x05)`; `Vendor Specific (0xff)`; `Unknown event (0x77)`.
    static func describe(event code: UInt8) -> String {
        let suffix = " (0x" + hex(code, width: 2) + ")"
        if let layout = byCode[code] { return layout.name + suffix }
        return "Unknown event" + suffix
    }

    /// `LE Connection Complete (0x01)` or `Unknown LE subevent (0x77)`.
    static func describe(subevent code: UInt8) -> String {
        let suffix = " (0x" + hex(code, width: 2) + ")"
        if let layout = bySubevent[code] { return layout.name + suffix }
        return "Unknown LE subevent" + suffix
    }

    static let statusHandle: [Parameter] = [.status, .handle]
    static let inquiryResponse: [Parameter] = [
        .bdAddr, .u8("page_scan_repetition_mode"), .x16("reserved"), .x24("class_of_device"), .x16("clock_offset"),
    ]

    static let events: [EventLayout] = [
        EventLayout(0x01, "Inquiry Complete", [.status]),
        EventLayout(0x02, "Inquiry Result", [.list("num_responses", inquiryResponse)]),
        EventLayout(0x03, "Connection Complete", [.status, .handle, .bdAddr, .u8("link_type"),
                                                  .flag("encryption_enabled")]),
        EventLayout(0x04, "Connection Request", [.bdAddr, .x24("class_of_device"), .u8("link_type")]),
        EventLayout(0x05, "Disconnection Complete", [.status, .handle, .reason()]),
        EventLayout(0x06, "Authentication Complete", statusHandle),
        EventLayout(0x07, "Remote Name Request Complete", [.status, .bdAddr, Parameter("remote_name", .text(248))]),
        EventLayout(0x08, "Encryption Change", [.status, .handle, .u8("encryption_enabled")]),
        EventLayout(0x09, "Change Connection Link Key Complete", statusHandle),
        EventLayout(0x0A, "Link Key Type Changed", [.status, .handle, .u8("key_flag")]),
        EventLayout(0x0B, "Read Remote Supported Features Complete", [.status, .handle, .x64("lmp_features")]),
        EventLayout(0x0C, "Read Remote Version Information Complete", [.status, .handle, .u8("version"),
                                                                       .x16("company"), .x16("subversion")]),
        EventLayout(0x0D, "QoS Setup Complete", [.status, .handle, .x8("unused"), .u8("service_type"),
                      .u32("token_rate"), .u32("peak_bandwidth"), .u32("latency"), .u32("delay_variation")]),
        EventLayout(0x0E, "Command Complete"),
        EventLayout(0x0F, "Command Status"),
        EventLayout(0x10, "Hardware Error", [.x8("hardware_code")]),
        EventLayout(0x11, "Flush Occurred", [.handle]),
        EventLayout(0x12, "Role Change", [.status, .bdAddr, Parameter("new_role", .role)]),
        EventLayout(0x13, "Number Of Completed Packets"),
        EventLayout(0x14, "Mode Change", [.status, .handle, .u8("current_mode"), .u16("interval")]),
        EventLayout(0x15, "Return Link Keys", [.list("num_keys", [.bdAddr, .key("link_key")])]),
        EventLayout(0x16, "PIN Code Request", [.bdAddr]),
        EventLayout(0x17, "Link Key Request", [.bdAddr]),
        EventLayout(0x18, "Link Key Notification", [.bdAddr, .key("link_key"), .u8("key_type")]),
        EventLayout(0x19, "Loopback Command", [.rest("command")]),
        EventLayout(0x1A, "Data Buffer Overflow", [.u8("link_type")]),
        EventLayout(0x1B, "Max Slots Change", [.handle, .u8("lmp_max_slots")]),
        EventLayout(0x1C, "Read Clock Offset Complete", [.status, .handle, .x16("clock_offset")]),
        EventLayout(0x1D, "Connection Packet Type Changed", [.status, .handle, .x16("packet_type")]),
        EventLayout(0x1E, "QoS Violation", [.handle]),
        EventLayout(0x1F, "Page Scan Mode Change", [.bdAddr, .u8("page_scan_mode")]),
        EventLayout(0x20, "Page Scan Repetition Mode Change", [.bdAddr, .u8("page_scan_repetition_mode")]),
        EventLayout(0x21, "Flow Specification Complete", [.status, .handle, .x8("unused"), .u8("flow_direction"),
                      .u8("service_type"), .u32("token_rate"), .u32("token_bucket_size"), .u32("peak_bandwidth"),
                      .u32("access_latency")]),
        EventLayout(0x22, "Inquiry Result with RSSI", [.list("num_responses", [.bdAddr, .u8("page_scan_repetition_mode"),
                      .x8("reserved"), .x24("class_of_device"), .x16("clock_offset"), .i8("rssi")])]),
        EventLayout(0x23, "Read Remote Extended Features Complete", [.status, .handle, .u8("page_number"),
                      .u8("max_page_number"), .x64("extended_lmp_features")]),
        EventLayout(0x2C, "Synchronous Connection Complete", [.status, .handle, .bdAddr, .u8("link_type"),
                      .u8("transmission_interval"), .u8("retransmission_window"), .u16("rx_packet_length"),
                      .u16("tx_packet_length"), .u8("air_mode")]),
        EventLayout(0x2D, "Synchronous Connection Changed", [.status, .handle, .u8("transmission_interval"),
                      .u8("retransmission_window"), .u16("rx_packet_length"), .u16("tx_packet_length")]),
        EventLayout(0x2E, "Sniff Subrating", [.status, .handle, .u16("max_tx_latency"), .u16("max_rx_latency"),
                      .u16("min_remote_timeout"), .u16("min_local_timeout")]),
        EventLayout(0x2F, "Extended Inquiry Result", [.u8("num_responses"), .bdAddr, .u8("page_scan_repetition_mode"),
                      .x8("reserved"), .x24("class_of_device"), .x16("clock_offset"), .i8("rssi"),
                      Parameter("eir", .advertisingData(lengthPrefixed: false))]),
        EventLayout(0x30, "Encryption Key Refresh Complete", statusHandle),
        EventLayout(0x31, "IO Capability Request", [.bdAddr]),
        EventLayout(0x32, "IO Capability Response", [.bdAddr, .u8("io_capability"), .u8("oob_data_present"),
                                                     .x8("authentication_requirements")]),
        EventLayout(0x33, "User Confirmation Request", [.bdAddr, .u32("numeric_value")]),
        EventLayout(0x34, "User Passkey Request", [.bdAddr]),
        EventLayout(0x35, "Remote OOB Data Request", [.bdAddr]),
        EventLayout(0x36, "Simple Pairing Complete", [.status, .bdAddr]),
        EventLayout(0x38, "Link Supervision Timeout Changed", [.handle, .u16("link_supervision_timeout")]),
        EventLayout(0x39, "Enhanced Flush Complete", [.handle]),
        EventLayout(0x3B, "User Passkey Notification", [.bdAddr, .u32("passkey")]),
        EventLayout(0x3C, "Keypress Notification", [.bdAddr, .u8("notification_type")]),
        EventLayout(0x3D, "Remote Host Supported Features Notification", [.bdAddr, .x64("host_supported_features")]),
        EventLayout(0x3E, "LE Meta"),
        EventLayout(0x40, "Physical Link Complete", [.status, .u8("physical_link_handle")]),
        EventLayout(0x41, "Channel Selected", [.u8("physical_link_handle")]),
        EventLayout(0x42, "Disconnection Physical Link Complete", [.status, .u8("physical_link_handle"), .reason()]),
        EventLayout(0x43, "Physical Link Loss Early Warning", [.u8("physical_link_handle"), .u8("link_loss_reason")]),
        EventLayout(0x44, "Physical Link Recovery", [.u8("physical_link_handle")]),
        EventLayout(0x45, "Logical Link Complete", [.status, .handle, .u8("physical_link_handle"),
                                                    .u8("tx_flow_spec_id")]),
        EventLayout(0x46, "Disconnection Logical Link Complete", [.status, .handle, .reason()]),
        EventLayout(0x47, "Flow Spec Modify Complete", statusHandle),
        EventLayout(0x48, "Number Of Completed Data Blocks", [.u16("total_num_data_blocks"),
                      .list("num_handles", [.handle, .u16("num_completed_packets"), .u16("num_completed_blocks")])]),
        EventLayout(0x49, "AMP Start Test", [.status, .u8("test_scenario")]),
        EventLayout(0x4A, "AMP Test End", [.status, .u8("test_scenario")]),
        EventLayout(0x4B, "AMP Receiver Report", [.rest("report")]),
        EventLayout(0x4C, "Short Range Mode Change Complete", [.status, .u8("physical_link_handle"),
                                                               .flag("short_range_mode")]),
        EventLayout(0x4D, "AMP Status Change", [.status, .u8("amp_status")]),
        EventLayout(0x4E, "Triggered Clock Capture", [.handle, .u8("which_clock"), .x32("clock"), .u16("slot_offset")]),
        EventLayout(0x4F, "Synchronization Train Complete", [.status]),
        EventLayout(0x50, "Synchronization Train Received", [.status, .bdAddr, .x32("clock_offset"),
                      .key("afh_channel_map", 10), .u8("lt_addr"), .x32("next_broadcast_instant"),
                      .u16("connectionless_peripheral_broadcast_interval"), .x8("service_data")]),
        EventLayout(0x51, "Connectionless Peripheral Broadcast Receive", [.bdAddr, .u8("lt_addr"), .x32("clk"),
                      .x32("offset"), .u8("receive_status"), .u8("fragment"), Parameter("data", .lengthPrefixed)]),
        EventLayout(0x52, "Connectionless Peripheral Broadcast Timeout", [.bdAddr, .u8("lt_addr")]),
        EventLayout(0x53, "Truncated Page Complete", [.status, .bdAddr]),
        EventLayout(0x54, "Peripheral Page Response Timeout"),
        EventLayout(0x55, "Connectionless Peripheral Broadcast Channel Map Change", [.key("channel_map", 10)]),
        EventLayout(0x56, "Inquiry Response Notification", [.x24("lap"), .i8("rssi")]),
        EventLayout(0x57, "Authenticated Payload Timeout Expired", [.handle]),
        EventLayout(0x58, "SAM Status Change", [.handle, .u8("local_sam_index"), .u8("local_sam_tx_availability"),
                      .u8("local_sam_rx_availability"), .u8("remote_sam_index"), .u8("remote_sam_tx_availability"),
                      .u8("remote_sam_rx_availability")]),
        EventLayout(0x59, "Encryption Change [v2]", [.status, .handle, .u8("encryption_enabled"),
                                                     .u8("encryption_key_size")]),
        EventLayout(0xFF, "Vendor Specific", [.rest("vendor_data")]),
    ]
}
