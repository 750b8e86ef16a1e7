/// Controller & Baseband commands (OGF 0x03, Core Vol 4 Part E §7.3).
extension CommandTable {
    static func readWrite(_ read: UInt16, _ readName: String, _ write: UInt16, _ writeName: String,
                          _ value: [Parameter]) -> [CommandLayout] {
        [CommandLayout(read, readName, returns: [.status] + value), CommandLayout(write, writeName, value)]
    }

    static let controllerAndBaseband: [CommandLayout] = [
        CommandLayout(0x0C01, "Set Event Mask", [.x64("event_mask")]),
        CommandLayout(0x0C03, "Reset"),
        CommandLayout(0x0C05, "Set Event Filter", [.u8("filter_type"), .rest("filter")]),
        CommandLayout(0x0C08, "Flush", [.handle], returns: handleReturn),
        CommandLayout(0x0C0B, "Create New Unit Key"),
        CommandLayout(0x0C0D, "Read Stored Link Key", [.bdAddr, .flag("read_all")],
                      returns: [.status, .u16("max_num_keys"), .u16("num_keys_read")]),
        CommandLayout(0x0C11, "Write Stored Link Key", [.list("num_keys_to_write", [.bdAddr, .key("link_key")])],
                      returns: [.status, .u8("num_keys_written")]),
        CommandLayout(0x0C12, "Delete Stored Link Key", [.bdAddr, .flag("delete_all")],
                      returns: [.status, .u16("num_keys_deleted")]),
        CommandLayout(0x0C13, "Write Local Name", [Parameter("local_name", .text(248))]),
        CommandLayout(0x0C14, "Read Local Name", returns: [.status, Parameter("local_name", .text(248))]),
        CommandLayout(0x0C21, "Read Encryption Mode", returns: [.status, .u8("encryption_mode")]),
        CommandLayout(0x0C22, "Write Encryption Mode", [.u8("encryption_mode")]),
        CommandLayout(0x0C27, "Read Automatic Flush Timeout", [.handle],
                      returns: [.status, .handle, .u16("flush_timeout")]),
        CommandLayout(0x0C28, "Write Automatic Flush Timeout", [.handle, .u16("flush_timeout")], returns: handleReturn),
        CommandLayout(0x0C2D, "Read Transmit Power Level", [.handle, .u8("type")],
                      returns: [.status, .handle, .i8("tx_power_level")]),
        CommandLayout(0x0C31, "Set Controller To Host Flow Control", [.u8("flow_control_enable")]),
        CommandLayout(0x0C33, "Host Buffer Size", [.u16("acl_data_packet_length"), .u8("sco_data_packet_length"),
                      .u16("total_num_acl_data_packets"), .u16("total_num_sco_data_packets")]),
        CommandLayout(0x0C35, "Host Number Of Completed Packets",
                      [.list("num_handles", [.handle, .u16("num_completed_packets")])]),
        CommandLayout(0x0C36, "Read Link Supervision Timeout", [.handle],
                      returns: [.status, .handle, .u16("link_supervision_timeout")]),
        CommandLayout(0x0C37, "Write Link Supervision Timeout", [.handle, .u16("link_supervision_timeout")],
                      returns: handleReturn),
        CommandLayout(0x0C38, "Read Number Of Supported IAC", returns: [.status, .u8("num_support_iac")]),
        CommandLayout(0x0C39, "Read Current IAC LAP", returns: [.status, .list("num_current_iac", [.x24("iac_lap")])]),
        CommandLayout(0x0C3A, "Write Current IAC LAP", [.list("num_current_iac", [.x24("iac_lap")])]),
        CommandLayout(0x0C3F, "Set AFH Host Channel Classification", [.key("afh_host_channel_classification", 10)]),
        CommandLayout(0x0C51, "Read Extended Inquiry Response",
                      returns: [.status, .u8("fec_required"), Parameter("eir", .advertisingData(lengthPrefixed: false))]),
        CommandLayout(0x0C52, "Write Extended Inquiry Response",
                      [.u8("fec_required"), Parameter("eir", .advertisingData(lengthPrefixed: false))]),
        CommandLayout(0x0C53, "Refresh Encryption Key", [.handle]),
        CommandLayout(0x0C57, "Read Local OOB Data", returns: [.status, .key("c"), .key("r")]),
        CommandLayout(0x0C58, "Read Inquiry Response Transmit Power Level", returns: [.status, .i8("tx_power")]),
        CommandLayout(0x0C59, "Write Inquiry Transmit Power Level", [.i8("tx_power")]),
        CommandLayout(0x0C5F, "Enhanced Flush", [.handle, .u8("packet_type")]),
        CommandLayout(0x0C60, "Send Keypress Notification", [.bdAddr, .u8("notification_type")],
                      returns: addressReturn),
        CommandLayout(0x0C63, "Set Event Mask Page 2", [.x64("event_mask_page_2")]),
        CommandLayout(0x0C64, "Read Location Data", returns: [.status, .rest("location_data")]),
        CommandLayout(0x0C65, "Write Location Data", [.rest("location_data")]),
        CommandLayout(0x0C68, "Read Enhanced Transmit Power Level", [.handle, .u8("type")],
                      returns: [.status, .handle, .i8("tx_power_level_gfsk"), .i8("tx_power_level_dqpsk"),
                                .i8("tx_power_level_8dpsk")]),
        CommandLayout(0x0C69, "Read Best Effort Flush Timeout", [.handle],
                      returns: [.status, .u32("best_effort_flush_timeout")]),
        CommandLayout(0x0C6A, "Write Best Effort Flush Timeout", [.handle, .u32("best_effort_flush_timeout")]),
        CommandLayout(0x0C6B, "Short Range Mode", [.u8("physical_link_handle"), .flag("short_range_mode")]),
        CommandLayout(0x0C6C, "Read LE Host Support", returns: [.status, .flag("le_supported_host"), .x8("unused")]),
        CommandLayout(0x0C6D, "Write LE Host Support", [.flag("le_supported_host"), .x8("unused")]),
        CommandLayout(0x0C6E, "Set MWS Channel Parameters", [.rest("parameters")]),
        CommandLayout(0x0C6F, "Set External Frame Configuration", [.rest("parameters")]),
        CommandLayout(0x0C70, "Set MWS Signaling", [.rest("parameters")], returns: [.status, .rest("parameters")]),
        CommandLayout(0x0C71, "Set MWS Transport Layer", [.u8("transport_layer"), .u32("to_mws_baud_rate"),
                                                          .u32("from_mws_baud_rate")]),
        CommandLayout(0x0C72, "Set MWS Scan Frequency Table", [.rest("parameters")]),
        CommandLayout(0x0C73, "Set MWS PATTERN Configuration", [.rest("parameters")]),
        CommandLayout(0x0C74, "Set Reserved LT_ADDR", [.u8("lt_addr")], returns: [.status, .u8("lt_addr")]),
        CommandLayout(0x0C75, "Delete Reserved LT_ADDR", [.u8("lt_addr")], returns: [.status, .u8("lt_addr")]),
        CommandLayout(0x0C76, "Set Connectionless Peripheral Broadcast Data", [.u8("lt_addr"), .u8("fragment"),
                      Parameter("data", .lengthPrefixed)], returns: [.status, .u8("lt_addr")]),
        CommandLayout(0x0C77, "Read Synchronization Train Parameters",
                      returns: [.status, .u16("sync_train_interval"), .u32("sync_train_timeout"), .x8("service_data")]),
        CommandLayout(0x0C78, "Write Synchronization Train Parameters", [.u16("interval_min"), .u16("interval_max"),
                      .u32("sync_train_timeout"), .x8("service_data")], returns: [.status, .u16("sync_train_interval")]),
        CommandLayout(0x0C7B, "Read Authenticated Payload Timeout", [.handle],
                      returns: [.status, .handle, .u16("authenticated_payload_timeout")]),
        CommandLayout(0x0C7C, "Write Authenticated Payload Timeout", [.handle, .u16("authenticated_payload_timeout")],
                      returns: handleReturn),
        CommandLayout(0x0C7D, "Read Local OOB Extended Data",
                      returns: [.status, .key("c_192"), .key("r_192"), .key("c_256"), .key("r_256")]),
        CommandLayout(0x0C82, "Set Ecosystem Base Interval", [.u16("interval")]),
        CommandLayout(0x0C83, "Configure Data Path", [.u8("data_path_direction"), .u8("data_path_id"),
                      Parameter("vendor_specific_config", .lengthPrefixed)]),
        CommandLayout(0x0C84, "Set Min Encryption Key Size", [.u8("min_encryption_key_size")]),
    ]
    + readWrite(0x0C09, "Read PIN Type", 0x0C0A, "Write PIN Type", [.u8("pin_type")])
    + readWrite(0x0C15, "Read Connection Accept Timeout", 0x0C16, "Write Connection Accept Timeout",
                [.u16("connection_accept_timeout")])
    + readWrite(0x0C17, "Read Page Timeout", 0x0C18, "Write Page Timeout", [.u16("page_timeout")])
    + readWrite(0x0C19, "Read Scan Enable", 0x0C1A, "Write Scan Enable", [.x8("scan_enable")])
    + readWrite(0x0C1B, "Read Page Scan Activity", 0x0C1C, "Write Page Scan Activity",
                [.u16("page_scan_interval"), .u16("page_scan_window")])
    + readWrite(0x0C1D, "Read Inquiry Scan Activity", 0x0C1E, "Write Inquiry Scan Activity",
                [.u16("inquiry_scan_interval"), .u16("inquiry_scan_window")])
    + readWrite(0x0C1F, "Read Authentication Enable", 0x0C20, "Write Authentication Enable",
                [.flag("authentication_enable")])
    + readWrite(0x0C23, "Read Class of Device", 0x0C24, "Write Class of Device", [.x24("class_of_device")])
    + readWrite(0x0C25, "Read Voice Setting", 0x0C26, "Write Voice Setting", [.x16("voice_setting")])
    + readWrite(0x0C29, "Read Num Broadcast Retransmissions", 0x0C2A, "Write Num Broadcast Retransmissions",
                [.u8("num_broadcast_retransmissions")])
    + readWrite(0x0C2B, "Read Hold Mode Activity", 0x0C2C, "Write Hold Mode Activity", [.x8("hold_mode_activity")])
    + readWrite(0x0C2E, "Read Synchronous Flow Control Enable", 0x0C2F, "Write Synchronous Flow Control Enable",
                [.flag("synchronous_flow_control_enable")])
    + readWrite(0x0C3B, "Read Page Scan Period Mode", 0x0C3C, "Write Page Scan Period Mode",
                [.u8("page_scan_period_mode")])
    + readWrite(0x0C42, "Read Inquiry Scan Type", 0x0C43, "Write Inquiry Scan Type", [.u8("scan_type")])
    + readWrite(0x0C44, "Read Inquiry Mode", 0x0C45, "Write Inquiry Mode", [.u8("inquiry_mode")])
    + readWrite(0x0C46, "Read Page Scan Type", 0x0C47, "Write Page Scan Type", [.u8("page_scan_type")])
    + readWrite(0x0C48, "Read AFH Channel Assessment Mode", 0x0C49, "Write AFH Channel Assessment Mode",
                [.flag("afh_channel_assessment_mode")])
    + readWrite(0x0C55, "Read Simple Pairing Mode", 0x0C56, "Write Simple Pairing Mode", [.flag("simple_pairing_mode")])
    + readWrite(0x0C5A, "Read Default Erroneous Data Reporting", 0x0C5B, "Write Default Erroneous Data Reporting",
                [.flag("erroneous_data_reporting")])
    + readWrite(0x0C61, "Read Logical Link Accept Timeout", 0x0C62, "Write Logical Link Accept Timeout",
                [.u16("logical_link_accept_timeout")])
    + readWrite(0x0C66, "Read Flow Control Mode", 0x0C67, "Write Flow Control Mode", [.u8("flow_control_mode")])
    + readWrite(0x0C79, "Read Secure Connections Host Support", 0x0C7A, "Write Secure Connections Host Support",
                [.flag("secure_connections_host_support")])
    + readWrite(0x0C7E, "Read Extended Page Timeout", 0x0C7F, "Write Extended Page Timeout",
                [.u16("extended_page_timeout")])
    + readWrite(0x0C80, "Read Extended Inquiry Length", 0x0C81, "Write Extended Inquiry Length",
                [.u16("extended_inquiry_length")])

    /// Informational (OGF 0x04, §7.4), Status (OGF 0x05, §7.5) and Testing (OGF 0x06, §7.7) commands.
    static let informationalStatusTesting: [CommandLayout] = [
        CommandLayout(0x1001, "Read Local Version Information",
                      returns: [.status, .u8("hci_version"), .x16("hci_subversion"), .u8("lmp_version"),
                                .x16("company"), .x16("lmp_subversion")]),
        CommandLayout(0x1002, "Read Local Supported Commands", returns: [.status, .key("supported_commands", 64)]),
        CommandLayout(0x1003, "Read Local Supported Features", returns: [.status, .x64("lmp_features")]),
        CommandLayout(0x1004, "Read Local Extended Features", [.u8("page_number")],
                      returns: [.status, .u8("page_number"), .u8("max_page_number"), .x64("extended_lmp_features")]),
        CommandLayout(0x1005, "Read Buffer Size", returns: [.status, .u16("acl_data_packet_length"),
                      .u8("sco_data_packet_length"), .u16("total_num_acl_data_packets"),
                      .u16("total_num_sco_data_packets")]),
        CommandLayout(0x1007, "Read Country Code", returns: [.status, .u8("country_code")]),
        CommandLayout(0x1009, "Read BD_ADDR", returns: addressReturn),
        CommandLayout(0x100A, "Read Data Block Size", returns: [.status, .u16("max_acl_data_packet_length"),
                      .u16("data_block_length"), .u16("total_num_data_blocks")]),
        CommandLayout(0x100B, "Read Local Supported Codecs",
                      returns: [.status, .list("num_supported_standard_codecs", [.x8("codec_id")]),
                                .list("num_supported_vendor_codecs", [.x32("vendor_codec_id")])]),
        CommandLayout(0x100C, "Read Local Simple Pairing Options",
                      returns: [.status, .x8("simple_pairing_options"), .u8("max_encryption_key_size")]),
        CommandLayout(0x100D, "Read Local Supported Codecs [v2]", returns: [.status, .rest("codecs")]),
        CommandLayout(0x100E, "Read Local Supported Codec Capabilities", [.key("codec_id", 5),
                      .u8("logical_transport_type"), .u8("codec_direction")], returns: [.status, .rest("capabilities")]),
        CommandLayout(0x100F, "Read Local Supported Controller Delay", [.key("codec_id", 5),
                      .u8("logical_transport_type"), .u8("codec_direction"), Parameter("codec_configuration", .lengthPrefixed)],
                      returns: [.status, .u24("min_controller_delay"), .u24("max_controller_delay")]),
        CommandLayout(0x1401, "Read Failed Contact Counter", [.handle],
                      returns: [.status, .handle, .u16("failed_contact_counter")]),
        CommandLayout(0x1402, "Reset Failed Contact Counter", [.handle], returns: handleReturn),
        CommandLayout(0x1403, "Read Link Quality", [.handle], returns: [.status, .handle, .u8("link_quality")]),
        CommandLayout(0x1405, "Read RSSI", [.handle], returns: [.status, .handle, .i8("rssi")]),
        CommandLayout(0x1406, "Read AFH Channel Map", [.handle],
                      returns: [.status, .handle, .u8("afh_mode"), .key("afh_channel_map", 10)]),
        CommandLayout(0x1407, "Read Clock", [.handle, .u8("which_clock")],
                      returns: [.status, .handle, .x32("clock"), .u16("accuracy")]),
        CommandLayout(0x1408, "Read Encryption Key Size", [.handle], returns: [.status, .handle, .u8("key_size")]),
        CommandLayout(0x1409, "Read Local AMP Info", returns: [.status, .rest("amp_info")]),
        CommandLayout(0x140A, "Read Local AMP ASSOC", [.rest("parameters")], returns: [.status, .rest("amp_assoc")]),
        CommandLayout(0x140B, "Write Remote AMP ASSOC", [.rest("parameters")], returns: [.status, .u8("physical_link_handle")]),
        CommandLayout(0x140C, "Get MWS Transport Layer Configuration", returns: [.status, .rest("configuration")]),
        CommandLayout(0x140D, "Set Triggered Clock Capture", [.handle, .flag("enable"), .u8("which_clock"),
                      .flag("lpo_allowed"), .u8("num_clock_captures_to_filter")]),
        CommandLayout(0x1801, "Read Loopback Mode", returns: [.status, .u8("loopback_mode")]),
        CommandLayout(0x1802, "Write Loopback Mode", [.u8("loopback_mode")]),
        CommandLayout(0x1803, "Enable Implementation Under Test Mode"),
        CommandLayout(0x1804, "Write Simple Pairing Debug Mode", [.flag("debug_mode")]),
        CommandLayout(0x1807, "Enable AMP Receiver Reports", [.flag("enable"), .u8("interval")]),
        CommandLayout(0x1808, "AMP Test End"),
        CommandLayout(0x1809, "AMP Test", [.rest("parameters")]),
        CommandLayout(0x180A, "Write Secure Connections Test Mode", [.handle, .flag("dm1_acl_u_mode"),
                      .flag("esco_loopback_mode")], returns: handleReturn),
    ]
}
