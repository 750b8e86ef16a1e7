/// LE Meta subevents (Core Vol 4 Part E §7.7.65). Advertising reports (0x02, 0x0B, 0x0D) are
/// decoded by `AdvertisingReportDescription`; their entries here give the name.
extension EventTable {
    static let connectionTiming: [Parameter] = [.u16("interval"), .u16("latency"), .u16("supervision_timeout")]
    static let enhancedConnectionComplete: [Parameter] = [
        .status, .handle, Parameter("role", .role), .addrType("peer_address_type"), .addr("peer"),
        .addr("local_resolvable_private_address"), .addr("peer_resolvable_private_address"),
    ] + connectionTiming + [.u8("central_clock_accuracy")]
    static let syncEstablished: [Parameter] = [
        .status, .x16("sync_handle"), .u8("advertising_sid"), .addrType("advertiser_address_type"),
        .addr("advertiser_address"), .u8("advertiser_phy"), .u16("periodic_advertising_interval"),
        .u8("advertiser_clock_accuracy"),
    ]
    static let syncTransferReceived: [Parameter] = [
        .status, .handle, .x16("service_data"), .x16("sync_handle"), .u8("advertising_sid"),
        .addrType("advertiser_address_type"), .addr("advertiser_address"), .u8("advertiser_phy"),
        .u16("periodic_advertising_interval"), .u8("advertiser_clock_accuracy"),
    ]
    static let pawrTiming: [Parameter] = [
        .u8("num_subevents"), .u8("subevent_interval"), .u8("response_slot_delay"), .u8("response_slot_spacing"),
    ]
    static let cisEstablished: [Parameter] = [
        .status, .handle, .u24("cig_sync_delay"), .u24("cis_sync_delay"), .u24("transport_latency_c_to_p"),
        .u24("transport_latency_p_to_c"), .u8("phy_c_to_p"), .u8("phy_p_to_c"), .u8("nse"), .u8("bn_c_to_p"),
        .u8("bn_p_to_c"), .u8("ft_c_to_p"), .u8("ft_p_to_c"), .u16("max_pdu_c_to_p"), .u16("max_pdu_p_to_c"),
        .u16("iso_interval"),
    ]

    static let leSubevents1: [EventLayout] = [
        EventLayout(0x01, "LE Connection Complete", [.status, .handle, Parameter("role", .role),
                      .addrType("peer_address_type"), .addr("peer")] + connectionTiming + [.u8("central_clock_accuracy")]),
        EventLayout(0x02, "LE Advertising Report"),
        EventLayout(0x03, "LE Connection Update Complete", [.status, .handle] + connectionTiming),
        EventLayout(0x04, "LE Read Remote Features Complete", [.status, .handle, .x64("le_features")]),
        EventLayout(0x05, "LE Long Term Key Request", [.handle, .x64("random_number"), .x16("ediv")]),
        EventLayout(0x06, "LE Remote Connection Parameter Request", [.handle, .u16("interval_min"),
                      .u16("interval_max"), .u16("latency"), .u16("timeout")]),
        EventLayout(0x07, "LE Data Length Change", [.handle, .u16("max_tx_octets"), .u16("max_tx_time"),
                      .u16("max_rx_octets"), .u16("max_rx_time")]),
        EventLayout(0x08, "LE Read Local P-256 Public Key Complete", [.status, .key("local_p256_public_key", 64)]),
        EventLayout(0x09, "LE Generate DHKey Complete", [.status, .key("dhkey", 32)]),
        EventLayout(0x0A, "LE Enhanced Connection Complete", enhancedConnectionComplete),
        EventLayout(0x0B, "LE Directed Advertising Report"),
        EventLayout(0x0C, "LE PHY Update Complete", [.status, .handle, .u8("tx_phy"), .u8("rx_phy")]),
        EventLayout(0x0D, "LE Extended Advertising Report"),
        EventLayout(0x0E, "LE Periodic Advertising Sync Established", syncEstablished),
        EventLayout(0x0F, "LE Periodic Advertising Report", [.x16("sync_handle"), .i8("tx_power"), .i8("rssi"),
                      .u8("cte_type"), .u8("data_status"), Parameter("data", .advertisingData(lengthPrefixed: true))]),
        EventLayout(0x10, "LE Periodic Advertising Sync Lost", [.x16("sync_handle")]),
        EventLayout(0x11, "LE Scan Timeout"),
        EventLayout(0x12, "LE Advertising Set Terminated", [.status, .u8("advertising_handle"), .handle,
                      .u8("num_completed_extended_advertising_events")]),
        EventLayout(0x13, "LE Scan Request Received", [.u8("advertising_handle"), .addrType("scanner_address_type"),
                      .addr("scanner_address")]),
        EventLayout(0x14, "LE Channel Selection Algorithm", [.handle, .u8("algorithm")]),
        EventLayout(0x15, "LE Connectionless IQ Report", [.x16("sync_handle"), .u8("channel_index"), .rest("samples")]),
        EventLayout(0x16, "LE Connection IQ Report", [.handle, .u8("rx_phy"), .u8("data_channel_index"),
                      .rest("samples")]),
        EventLayout(0x17, "LE CTE Request Failed", [.status, .handle]),
        EventLayout(0x18, "LE Periodic Advertising Sync Transfer Received", syncTransferReceived),
        EventLayout(0x19, "LE CIS Established", cisEstablished),
        EventLayout(0x1A, "LE CIS Request", [Parameter("acl_handle", .handle), Parameter("cis_handle", .handle),
                      .u8("cig_id"), .u8("cis_id")]),
        EventLayout(0x1B, "LE Create BIG Complete", [.status, .u8("big_handle"), .u24("big_sync_delay"),
                      .u24("transport_latency_big"), .u8("phy"), .u8("nse"), .u8("bn"), .u8("pto"), .u8("irc"),
                      .u16("max_pdu"), .u16("iso_interval"), .list("num_bis", [.handle])]),
        EventLayout(0x1C, "LE Terminate BIG Complete", [.u8("big_handle"), .reason()]),
        EventLayout(0x1D, "LE BIG Sync Established", [.status, .u8("big_handle"), .u24("transport_latency_big"),
                      .u8("nse"), .u8("bn"), .u8("pto"), .u8("irc"), .u16("max_pdu"), .u16("iso_interval"),
                      .list("num_bis", [.handle])]),
        EventLayout(0x1E, "LE BIG Sync Lost", [.u8("big_handle"), .reason()]),
        EventLayout(0x1F, "LE Request Peer SCA Complete", [.status, .handle, .u8("peer_clock_accuracy")]),
    ]

    static let leSubevents2: [EventLayout] = [
        EventLayout(0x20, "LE Path Loss Threshold", [.handle, .u8("current_path_loss"), .u8("zone_entered")]),
        EventLayout(0x21, "LE Transmit Power Reporting", [.status, .handle, .u8("reason"), .u8("phy"),
                      .i8("tx_power_level"), .x8("tx_power_level_flag"), .i8("delta")]),
        EventLayout(0x22, "LE BIGInfo Advertising Report", [.x16("sync_handle"), .u8("num_bis"), .u8("nse"),
                      .u16("iso_interval"), .u8("bn"), .u8("pto"), .u8("irc"), .u16("max_pdu"), .u24("sdu_interval"),
                      .u16("max_sdu"), .u8("phy"), .u8("framing"), .flag("encryption")]),
        EventLayout(0x23, "LE Subrate Change", [.status, .handle, .u16("subrate_factor"), .u16("peripheral_latency"),
                      .u16("continuation_number"), .u16("supervision_timeout")]),
        EventLayout(0x24, "LE Periodic Advertising Sync Established [v2]", syncEstablished + pawrTiming),
        EventLayout(0x25, "LE Periodic Advertising Report [v2]", [.x16("sync_handle"), .i8("tx_power"), .i8("rssi"),
                      .u8("cte_type"), .u16("periodic_event_counter"), .u8("subevent"), .u8("data_status"),
                      Parameter("data", .advertisingData(lengthPrefixed: true))]),
        EventLayout(0x26, "LE Periodic Advertising Sync Transfer Received [v2]", syncTransferReceived + pawrTiming),
        EventLayout(0x27, "LE Periodic Advertising Subevent Data Request", [.u8("advertising_handle"),
                      .u8("subevent_start"), .u8("subevent_data_count")]),
        EventLayout(0x28, "LE Periodic Advertising Response Report", [.u8("advertising_handle"), .u8("subevent"),
                      .u8("tx_status"), .rest("responses")]),
        EventLayout(0x29, "LE Enhanced Connection Complete [v2]", enhancedConnectionComplete
                      + [.u8("advertising_handle"), .x16("sync_handle")]),
        EventLayout(0x2A, "LE CIS Established [v2]", cisEstablished + [.u24("sub_interval"),
                      .u16("max_sdu_c_to_p"), .u16("max_sdu_p_to_c"), .u24("sdu_interval_c_to_p"),
                      .u24("sdu_interval_p_to_c"), .u8("framing")]),
        EventLayout(0x2B, "LE Read All Remote Features Complete", [.status, .handle, .u8("max_remote_page"),
                      .u8("max_valid_page"), .rest("le_features")]),
        EventLayout(0x2C, "LE CS Read Remote Supported Capabilities Complete", [.status, .handle, .rest("capabilities")]),
        EventLayout(0x2D, "LE CS Read Remote FAE Table Complete", [.status, .handle, .rest("remote_fae_table")]),
        EventLayout(0x2E, "LE CS Security Enable Complete", [.status, .handle]),
        EventLayout(0x2F, "LE CS Config Complete", [.status, .handle, .u8("config_id"), .u8("action"),
                      .rest("parameters")]),
        EventLayout(0x30, "LE CS Procedure Enable Complete", [.status, .handle, .u8("config_id"), .u8("state"),
                      .rest("parameters")]),
        EventLayout(0x31, "LE CS Subevent Result", [.handle, .u8("config_id"), .rest("results")]),
        EventLayout(0x32, "LE CS Subevent Result Continue", [.handle, .u8("config_id"), .rest("results")]),
        EventLayout(0x33, "LE CS Test End Complete", [.status]),
    ]
}
