import BluewireCore
import BluewireATT

extension GATTServer {
    /// Answers a request that arrived on another ATT bearer of the connection: an Enhanced ATT
    /// bearer (Core Vol 3 Part G §5.3.2, Part F §3.2.11), whose ATT_MTU `bearerMTU` comes from its
    /// L2CAP channel (Part G §5.3.1), not from the connection's Exchange MTU. The response is built
    /// for that MTU; the MTU of the unenhanced bearer stays as it was.
    public mutating func respond(to pdu: ATTPDU, from connection: UInt16, bearerMTU: Int) -> ATTPDU? {
        guard let saved = connections[connection]?.mtu else { return respond(to: pdu, from: connection) }
        connections[connection]?.mtu = min(max(bearerMTU, GATTServer.defaultMTU), configuration.serverMTU)
        let response = respond(to: pdu, from: connection)
        connections[connection]?.mtu = saved
        return response
    }
}
