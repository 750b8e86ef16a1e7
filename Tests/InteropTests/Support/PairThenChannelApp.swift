import Bluewire

/// The one-host application, as a user writes it with `import Bluewire` only: a `RemotePeripheral`
/// whose queue pairs on demand reads a value that needs encryption, then opens an L2CAP channel on
/// the same connection and returns what came back.
enum PairThenChannelApp {
    static func run(transport: String, peer: BluetoothAddress, value uuid: BluetoothUUID, psm: SPSM,
                    sdu: [UInt8]) async throws -> (value: [UInt8], level: LinkSecurityLevel, echo: [UInt8]?) {
        let host = EngineHost(transport: try await TransportSpec(parsing: transport).open(),
                              configuration: HostEngineConfiguration(randomAddress: .randomStatic(0x0000_0A11_0001)))
        await host.configureSecurity(HostSecurityConfiguration(
            pairing: PairingConfiguration(ioCapability: .noInputNoOutput), crypto: SMPCrypto(SwiftCryptoSMP())))
        _ = try await host.perform(.start).get()
        do {
            let device = RemotePeripheral(host: host, peer: peer)
            await device.attach(AutoAuthorizeDecorator(authorizer: SecurityManagerAuthorizer(device)))
            try await device.connect()
            // Read Using Characteristic UUID: refused with Insufficient Encryption, paired, read again.
            let values = try await device.run(GATTOperations.read(uuid: uuid))
            guard let connection = device.link?.connection else { throw RemotePeripheralError.notConnected }
            let level = await connection.securityLevel

            let channel = try await connection.openChannel(psm: psm)
            try await channel.send(sdu)
            var echoes = channel.sdus.makeAsyncIterator()
            let echo = try await echoes.next()
            await channel.close()
            _ = try? await connection.disconnect(reason: .remoteUserTerminatedConnection)
            await host.close()
            return (values.first?.value ?? [], level, echo)
        } catch {
            await host.close()
            throw error
        }
    }
}
