import BluewireCore

extension GATTDatabase {
    /// The `services` form of a database file (documented on `GATTDatabase.init(json:)`).
    static func loadServices(
        _ list: JSONValue, schema: GATTDatabaseFileSchema
    ) throws(GATTDatabaseFileError) -> GATTDatabase {
        var builder = GATTDatabaseBuilder()
        var ids: [(id: String, service: GATTServiceReference)] = []
        for item in try schema.array(list, key: "services") {
            _ = try schema.members(
                of: item, named: "service",
                allowed: ["uuid", "secondary", "handle", "id", "includes", "characteristics"]
            )
            let uuid = try schema.uuid(try schema.required("uuid", in: item), key: "uuid")
            var kind = GATTServiceKind.primary
            if let flag = item["secondary"], try schema.bool(flag, key: "secondary") { kind = .secondary }
            if let handleValue = item["handle"] {
                let handle = try schema.handle(handleValue)
                do { try builder.skipHandles(to: handle) } catch {
                    throw schema.error(.handleNotAscending(handle), at: handleValue.offset)
                }
            }
            let service: GATTServiceReference
            do { service = try builder.addService(uuid, kind: kind) } catch {
                throw schema.error(.database(error), at: item.offset)
            }
            if let idValue = item["id"] {
                let id = try schema.string(idValue, key: "id")
                if ids.contains(where: { $0.id == id }) { throw schema.error(.duplicateServiceID(id), at: idValue.offset) }
                ids.append((id, service))
            }
            if let includes = item["includes"] {
                for include in try schema.array(includes, key: "includes") {
                    let id = try schema.string(include, key: "includes")
                    guard let target = ids.first(where: { $0.id == id }), target.service != service else {
                        throw schema.error(.unknownServiceID(id), at: include.offset)
                    }
                    do { try builder.addIncludedService(target.service) } catch {
                        throw schema.error(.database(error), at: include.offset)
                    }
                }
            }
            if let characteristics = item["characteristics"] {
                for characteristic in try schema.array(characteristics, key: "characteristics") {
                    try loadCharacteristic(characteristic, schema: schema, into: &builder)
                }
            }
        }
        return builder.build()
    }

    static func loadCharacteristic(
        _ item: JSONValue, schema: GATTDatabaseFileSchema, into builder: inout GATTDatabaseBuilder
    ) throws(GATTDatabaseFileError) {
        _ = try schema.members(
            of: item, named: "characteristic",
            allowed: ["uuid", "properties", "perms", "value", "text", "cccd_perms", "descriptors"]
        )
        let uuid = try schema.uuid(try schema.required("uuid", in: item), key: "uuid")
        let properties = try schema.properties(try schema.required("properties", in: item))
        var perms = properties.impliedPermissions
        if let permsValue = item["perms"] { perms = try schema.permissions(permsValue, key: "perms") }
        var configurationPerms: AttributePermissions = [.read, .write]
        if let value = item["cccd_perms"] { configurationPerms = try schema.permissions(value, key: "cccd_perms") }
        let value = try schema.valueBytes(in: item)
        do {
            try builder.addCharacteristic(
                // Writable: a dynamic value the server keeps (a cached one is read-only to centrals).
                uuid, properties: properties, permissions: perms, value: GATTAttributeValue.cached(value).writable(perms, type: uuid),
                clientConfigurationPermissions: configurationPerms
            )
        } catch {
            throw schema.error(.database(error), at: item.offset)
        }
        guard let descriptors = item["descriptors"] else { return }
        for descriptor in try schema.array(descriptors, key: "descriptors") {
            _ = try schema.members(of: descriptor, named: "descriptor", allowed: ["uuid", "perms", "value", "text"])
            let descriptorUUID = try schema.uuid(try schema.required("uuid", in: descriptor), key: "uuid")
            var descriptorPerms: AttributePermissions = [.read]
            if let permsValue = descriptor["perms"] { descriptorPerms = try schema.permissions(permsValue, key: "perms") }
            let descriptorValue = try schema.valueBytes(in: descriptor)
            do {
                try builder.addDescriptor(
                    descriptorUUID, permissions: descriptorPerms, value: GATTAttributeValue.cached(descriptorValue).writable(descriptorPerms, type: descriptorUUID))
            } catch {
                throw schema.error(.database(error), at: descriptor.offset)
            }
        }
    }
}
