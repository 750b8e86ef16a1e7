/// H4 over byte streams: TCP and Unix sockets to an emulated controller, UARTs and ptys.
enum StreamTransports {
    static func openTCP(host: String, port: UInt16) async throws(TransportError) -> any HCITransport {
        let descriptor = try await DedicatedThread.run { () throws(SystemCallError) in
            let fd = try FileDescriptor.connectTCP(host: host, port: port)
            do throws(SystemCallError) {
                try fd.setNonBlocking()
                try fd.setNoDelay()
            } catch {
                try? fd.close()
                throw error
            }
            return fd
        }.mapError { TransportError.system($0) }.get()
        return try DescriptorTransport(descriptor: descriptor, isSocket: true, framing: .h4Stream)
    }

    static func openUnix(path: String) async throws(TransportError) -> any HCITransport {
        let descriptor = try await DedicatedThread.run { () throws(SystemCallError) in
            let fd = try FileDescriptor.connectUnix(path: path)
            do throws(SystemCallError) { try fd.setNonBlocking() } catch {
                try? fd.close()
                throw error
            }
            return fd
        }.mapError { error in
            error.errno == .noSuchFile ? TransportError.noSuchDevice(path) : .system(error)
        }.get()
        return try DescriptorTransport(descriptor: descriptor, isSocket: true, framing: .h4Stream)
    }

    static func openSerial(path: String, baudRate: Int, hardwareFlowControl: Bool) async throws(TransportError) -> any HCITransport {
        let descriptor = try await DedicatedThread.run { () throws(SystemCallError) in
            let fd = try FileDescriptor.openTTY(path: path)
            do throws(SystemCallError) { try fd.configureTTY(baudRate: baudRate, hardwareFlowControl: hardwareFlowControl) } catch {
                try? fd.close()
                throw error
            }
            return fd
        }.mapError { error -> TransportError in
            switch error.errno {
            case .noSuchFile, .noSuchDevice: .noSuchDevice(path)
            case .accessDenied, .permissionDenied: .permissionDenied(path)
            case .deviceBusy: .deviceBusy(path)
            default: .system(error)
            }
        }.get()
        return try DescriptorTransport(descriptor: descriptor, isSocket: false, framing: .h4Stream)
    }
}
