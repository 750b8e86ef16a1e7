import Bluewire

/// Enhanced ATT for `serve` (Core Vol 3 Part G §5.3.2), offered as BlueZ offers it: the GATT service
/// declares Server Supported Features with the EATT bit (§7.4) and Client Supported Features (§7.2),
/// where a client says it uses EATT (bluetoothd 5.66 looks for both before it opens bearers), and
/// SPSM 0x0027 accepts Enhanced Credit Based channels, each one more ATT bearer served by the same
/// database (HostEngine+EATT). `--no-eatt` leaves the database as the file has it and registers nothing.
enum ServeEATT {
    /// Where the feature characteristics are, once the database declares them.
    struct Declaration: Equatable {
        var serverSupportedFeatures: UInt16
        var clientSupportedFeatures: UInt16?
        /// Whether Server Supported Features has the EATT bit set.
        var offersEATT: Bool
    }

    /// `database` with the feature characteristics, keeping every handle the file gave: they go into a
    /// GATT service (0x1801) appended after the last handle, or at the end of the file's own GATT
    /// service when it is the last one. A file that declares Server Supported Features already is
    /// kept as it is (its own bits say whether it offers EATT); nil with the reason when they cannot be
    /// added (a GATT service in the middle, no handle left).
    static func declare(in database: GATTDatabase) -> (database: GATTDatabase, declaration: Declaration)? {
        if let existing = declaration(in: database) { return (database, existing) }
        let attributes = database.attributes
        let last = attributes.last?.handle ?? 0
        guard last < 0xFFF0 else { return nil }
        let gattServices = attributes.indices.filter {
            attributes[$0].type == .primaryService && attributes[$0].cachedValue.flatMap { BluetoothUUID(littleEndian: $0[...]) } == .genericAttribute
        }
        var builder = GATTDatabaseBuilder(firstHandle: last + 1)
        guard (try? builder.addGenericAttributeService(serverFeatures: .eatt)) != nil else { return nil }
        var added = builder.build().attributes
        if let service = gattServices.last {
            // The file's GATT service: the characteristics join it if it ends the database, since a
            // server has one GATT service (Part G §7); otherwise they cannot be declared.
            guard database.groupEndHandle(ofServiceAt: service) == last else { return nil }
            added.removeFirst()
        }
        guard let extended = try? GATTDatabase(attributes: attributes + added), let found = declaration(in: extended) else { return nil }
        return (extended, found)
    }

    /// The feature characteristics a database declares, if it declares Server Supported Features.
    static func declaration(in database: GATTDatabase) -> Declaration? {
        guard let server = database.characteristics.first(where: { $0.uuid == .serverSupportedFeatures }) else { return nil }
        let value = database[handle: server.valueHandle]?.cachedValue ?? []
        let client = database.characteristics.first { $0.uuid == .clientSupportedFeatures }
        return Declaration(
            serverSupportedFeatures: server.valueHandle, clientSupportedFeatures: client?.valueHandle,
            offersEATT: (value.first ?? 0) & GATTServerFeatures.eatt.rawValue != 0)
    }

    /// The receive parameters of each bearer: ATT_MTU `mtu` (at least 64, what an Enhanced Credit
    /// Based channel and an EATT bearer need, Part A §4.25, Part G §5.3.1), K-frames up to 247 octets (one
    /// LE Data Length packet), credits for two whole SDUs.
    static func bearerParameters(mtu: Int) -> CreditBasedChannelParameters {
        let channelMTU = max(64, mtu)
        let mps = min(247, channelMTU)
        return CreditBasedChannelParameters(mtu: channelMTU, mps: mps, initialCredits: 2 * ((channelMTU + 2 + mps - 1) / mps))
    }

    /// Accepts Enhanced Credit Based channels on SPSM 0x0027 on every link, without a security
    /// requirement of their own (as BlueZ listens, BT_IO_SEC_LOW): each attribute's permissions are
    /// checked on every bearer alike.
    static func register(on host: EngineHost, mtu: Int) async -> String? {
        let result = await host.perform(.registerServer(spsm: .eatt, parameters: bearerParameters(mtu: mtu), security: .none))
        if case .failure(let error) = result { return "EATT not offered: SPSM 0x0027 could not be registered (\(error))" }
        return nil
    }
}
