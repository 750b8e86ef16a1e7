import BluewireHostEngine

extension EngineHost {
    /// Values the link's running ATT stream of `pdu` (`HostRequest.streamATT`) has handed to the ACL
    /// queue so far; nil when none runs. For progress lines: reading it changes nothing.
    public func attStreamSent(connection: UInt16, pdu: ATTStream.PDU) -> Int? {
        engine.attStreamSent(connection: connection, pdu: pdu)
    }

    /// The ATT_MTU in force on a link; nil once it is gone.
    public func mtu(of connection: UInt16) -> Int? { engine.mtu(connection: connection) }
}
