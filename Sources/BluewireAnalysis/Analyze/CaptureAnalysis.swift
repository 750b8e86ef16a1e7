import BluewireCore

/// The result of analyzing a capture: its connections in the order they opened, and its peer devices.
public struct CaptureAnalysis: Sendable {
    public var connections: [AnalyzedConnection]
    public var recordCount: Int
    public var packetCount: Int
    /// Packets that failed to decode and could not be charged to a connection.
    public var decodeErrors: Int
    /// Connection Complete events with a non-zero status.
    public var failedConnectionAttempts: Int

    public init(
        connections: [AnalyzedConnection], recordCount: Int, packetCount: Int, decodeErrors: Int,
        failedConnectionAttempts: Int
    ) {
        self.connections = connections
        self.recordCount = recordCount
        self.packetCount = packetCount
        self.decodeErrors = decodeErrors
        self.failedConnectionAttempts = failedConnectionAttempts
    }

    /// ATT PDUs by opcode over all connections.
    public var attOpcodeCounts: [UInt8: Int] {
        var total: [UInt8: Int] = [:]
        for connection in connections {
            for (opcode, count) in connection.attOpcodeCounts { total[opcode, default: 0] += count }
        }
        return total
    }

    /// Connections whose Connection Complete event is in the capture.
    public var establishedConnections: [AnalyzedConnection] { connections.filter { $0.startedInCapture } }

    /// The peer devices, one per address in order of first connection; a connection whose peer is
    /// unknown (it predates the capture) is a device of its own.
    public var devices: [AnalyzedDevice] {
        var devices: [AnalyzedDevice] = []
        var byAddress: [BluetoothAddress: Int] = [:]
        for connection in connections {
            let d: Int
            if let address = connection.peerAddress, let known = byAddress[address] {
                d = known
            } else {
                d = devices.count
                devices.append(AnalyzedDevice(address: connection.peerAddress, firstConnection: connection))
                if let address = connection.peerAddress { byAddress[address] = d }
            }
            devices[d].add(connection)
        }
        return devices
    }
}
