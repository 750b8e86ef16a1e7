extension ATTBearer {
    /// An Enhanced ATT bearer (Core Vol 3 Part F §3.2.11) runs on an L2CAP Enhanced Credit Based
    /// channel; its ATT_MTU is not exchanged (Exchange MTU is for the unenhanced bearer only,
    /// §3.4.2) but is the smaller of the two channels' MTUs (Vol 3 Part G §5.3.1), and changes when
    /// the channel is reconfigured. The value is clamped to 64...65535 (the least MTU of an
    /// enhanced channel, Vol 3 Part A §4.25).
    public mutating func setEnhancedBearerMTU(_ mtu: Int) {
        self.mtu = min(max(mtu, 64), 65535)
        // No Exchange MTU may change it afterwards.
        mtuExchanged = true
    }
}
