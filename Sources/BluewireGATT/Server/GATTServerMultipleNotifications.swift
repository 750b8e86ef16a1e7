import BluewireATT
import BluewireCore

extension GATTServer {
    /// Notifications of several characteristic values to one client, in as few PDUs as it allows
    /// (Core Vol 3 Part G §4.10.2, Part F §3.4.7.4).
    ///
    /// Only values the client is subscribed to are sent. A client that set the Multiple Handle Value
    /// Notifications bit in its Client Supported Features (Part G §7.2) gets them packed into Multiple
    /// Handle Value Notifications, as many whole values per PDU as ATT_MTU holds; §4.10.2 forbids the
    /// PDU to any other client, which gets one Handle Value Notification per value. A PDU that would
    /// carry a single value, or a value too long to go whole, goes as a Handle Value Notification
    /// (cut to ATT_MTU − 3 as §3.4.7.1 allows). Every handle must be a notifiable characteristic's
    /// value, else nothing is sent and the error names the first that is not.
    public mutating func notifyMultiple(
        _ values: [GATTHandleValue], to connection: UInt16
    ) throws(GATTServerError) -> [GATTOutboundPDU] {
        var subscribed: [GATTHandleValue] = []
        for value in values {
            let descriptor = try configurationHandle(of: value.handle, needing: .notify)
            if let state = connections[connection], (state.clientConfigurations[descriptor] ?? 0) & 0x0001 != 0 {
                subscribed.append(value)
            }
        }
        guard let state = connections[connection], !subscribed.isEmpty else { return [] }
        let multiple = (state.clientSupportedFeatures.first ?? 0) & GATTClientFeatures.multipleHandleValueNotifications.rawValue != 0
        var out: [GATTOutboundPDU] = []
        func single(_ value: GATTHandleValue) {
            out.append(GATTOutboundPDU(connection: connection, bytes: ATTPDU.handleValueNotification(
                handle: value.handle, value: value.value.prefix(state.mtu - 3)).encode()))
        }
        guard multiple, subscribed.count >= 2 else {
            subscribed.forEach(single)
            return out
        }
        var packed = MultipleHandleValueNotification()
        var first: GATTHandleValue?
        var count = 0
        func flush() {
            if count >= 2 {
                out.append(GATTOutboundPDU(connection: connection, bytes: ATTPDU.multipleHandleValueNotification(packed).encode()))
            } else if let first {
                single(first)
            }
            packed = MultipleHandleValueNotification()
            first = nil
            count = 0
        }
        for value in subscribed {
            if packed.append(handle: value.handle, value: value.value[...], mtu: state.mtu) {
                if count == 0 { first = value }
                count += 1
                continue
            }
            flush()
            if packed.append(handle: value.handle, value: value.value[...], mtu: state.mtu) {
                first = value
                count = 1
            } else {
                single(value)  // too long to go whole in a tuple
            }
        }
        flush()
        return out
    }
}
