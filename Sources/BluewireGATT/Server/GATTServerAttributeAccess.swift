import BluewireATT
import BluewireCore

/// The result of reading an attribute for a client: bytes from the requested offset, or an error code.
enum AttributeRead {
    case value(ArraySlice<UInt8>)
    case error(ATTErrorCode)
}

extension GATTServer {
    /// The error a read by this connection must get for permission reasons, or nil if allowed.
    ///
    /// Authentication is checked before encryption: an attribute needing an authenticated key on an
    /// unencrypted link answers Insufficient Authentication (Core Vol 3 Part C §10.3.1, Part F §4).
    func readPermissionError(_ permissions: AttributePermissions, _ level: GATTSecurityLevel) -> ATTErrorCode? {
        guard permissions.isReadable else { return .readNotPermitted }
        return securityError(required: permissions.readSecurity, level)
    }

    /// The error a write by this connection must get for permission reasons, or nil if allowed.
    func writePermissionError(_ permissions: AttributePermissions, _ level: GATTSecurityLevel) -> ATTErrorCode? {
        guard permissions.isWritable else { return .writeNotPermitted }
        return securityError(required: permissions.writeSecurity, level)
    }

    func securityError(required: GATTSecurityLevel, _ level: GATTSecurityLevel) -> ATTErrorCode? {
        guard level < required else { return nil }
        return required == .authenticated ? .insufficientAuthentication : .insufficientEncryption
    }

    /// Reads the attribute at `index` for `connection` from `offset` on, checking permissions.
    ///
    /// A CCCD reads as this connection's own configuration (Part G §3.3.3.3: per client). Offsets past
    /// the end are Invalid Offset; an offset equal to the length reads as empty (§3.4.4.5).
    func readAttribute(at index: Int, offset: Int, connection: UInt16) -> AttributeRead {
        let attribute = database.attributes[index]
        let level = connections[connection]?.securityLevel ?? .none
        if let error = readPermissionError(attribute.permissions, level) { return .error(error) }
        // Per client, whatever the database holds; then the value the database or the server keeps.
        if let value = clientConfigurationBytes(of: attribute, connection: connection)
            ?? clientFeaturesBytes(of: attribute, connection: connection) ?? held(attribute) {
            guard offset <= value.count else { return .error(.invalidOffset) }
            return .value(value[(value.startIndex + offset)...])
        }
        switch attribute.value {
        case .cached(let bytes):
            guard offset <= bytes.count else { return .error(.invalidOffset) }
            return .value(bytes[offset...])
        case .dynamic(let dynamic):
            guard let read = dynamic.read else { return .error(.readNotPermitted) }
            guard offset <= maximumAttributeValueLength else { return .error(.invalidOffset) }
            let request = GATTReadRequest(handle: attribute.handle, offset: offset, connection: connection, securityLevel: level)
            do {
                let bytes = try read(request)
                return .value(bytes.prefix(maximumAttributeValueLength - offset))
            } catch {
                return .error(error.code)
            }
        }
    }

    /// The bytes answered from memory: a cached value, or a stored dynamic one without a read handler.
    func held(_ attribute: GATTAttribute) -> ArraySlice<UInt8>? {
        switch attribute.value {
        case .cached(let bytes): return bytes[...]
        case .dynamic(let dynamic): return dynamic.read == nil ? dynamic.stored?[...] : nil
        }
    }

    /// Whether a central may change the value of the attribute at `index` (its permissions aside): not
    /// a cached one, which the application fixed (Write Not Permitted). A CCCD and Client Supported
    /// Features are per client, whatever the database holds.
    func valueWriteError(at index: Int) -> ATTErrorCode? {
        let attribute = database.attributes[index]
        if attribute.type == .clientCharacteristicConfiguration || attribute.type == .clientSupportedFeatures { return nil }
        if case .cached = attribute.value { return .writeNotPermitted }
        return nil
    }

    /// A CCCD's value as this connection configured it, or nil if `attribute` is no characteristic's CCCD.
    func clientConfigurationBytes(of attribute: GATTAttribute, connection: UInt16) -> ArraySlice<UInt8>? {
        guard attribute.type == .clientCharacteristicConfiguration,
              database.characteristic(clientConfigurationHandle: attribute.handle).isSome else { return nil }
        let configuration = connections[connection]?.clientConfigurations[attribute.handle] ?? 0
        return [UInt8(truncatingIfNeeded: configuration), UInt8(truncatingIfNeeded: configuration >> 8)][...]
    }

    /// Writes `value` at `offset` into the attribute at `index` for `connection`. Permissions must
    /// already have been checked. Returns the error to report, or nil on success.
    mutating func writeAttribute(
        at index: Int, value: ArraySlice<UInt8>, offset: Int, connection: UInt16, kind: GATTWriteKind
    ) -> ATTErrorCode? {
        let attribute = database.attributes[index]
        guard offset + value.count <= maximumAttributeValueLength else { return .invalidAttributeValueLength }
        if attribute.type == .clientCharacteristicConfiguration,
           let characteristic = database.characteristic(clientConfigurationHandle: attribute.handle) {
            return writeClientConfiguration(characteristic, value: value, offset: offset, connection: connection)
        }
        if attribute.type == .clientSupportedFeatures {
            return writeClientSupportedFeatures(value: value, offset: offset, connection: connection)
        }
        switch attribute.value {
        case .cached:
            // Fixed by the application: read-only to centrals.
            return .writeNotPermitted
        case .dynamic(let dynamic) where dynamic.write == nil:
            guard let old = dynamic.stored else { return .writeNotPermitted }
            guard offset <= old.count else { return .invalidOffset }
            var new = Array(old[..<offset])
            new.append(contentsOf: value)
            database.replaceStoredValue(new, at: index)
            emit(.valueWritten(connection: connection, handle: attribute.handle, value: new))
            return nil
        case .dynamic(let dynamic):
            guard let write = dynamic.write else { return .writeNotPermitted }
            let level = connections[connection]?.securityLevel ?? .none
            let request = GATTWriteRequest(
                handle: attribute.handle, value: Array(value), offset: offset, connection: connection,
                securityLevel: level, kind: kind)
            do {
                try write(request)
                return nil
            } catch {
                return error.code
            }
        }
    }

    /// A write of a Client Characteristic Configuration descriptor: exactly two octets (Part G
    /// §3.3.3.3), stored per connection and reported as a subscription change.
    mutating func writeClientConfiguration(
        _ characteristic: GATTCharacteristicInfo, value: ArraySlice<UInt8>, offset: Int, connection: UInt16
    ) -> ATTErrorCode? {
        guard offset == 0 else { return .invalidOffset }
        guard value.count == 2, let descriptor = characteristic.clientConfigurationHandle else {
            return .invalidAttributeValueLength
        }
        let configuration = UInt16(value[value.startIndex]) | UInt16(value[value.startIndex + 1]) << 8
        let previous = connections[connection]?.clientConfigurations[descriptor] ?? 0
        connections[connection]?.clientConfigurations[descriptor] = configuration == 0 ? nil : configuration
        if previous != configuration {
            emit(.subscriptionChanged(GATTSubscription(
                connection: connection, valueHandle: characteristic.valueHandle, configuration: configuration)))
        }
        return nil
    }

    /// Client Supported Features reads as what this connection's client wrote (Part G §7.2: the
    /// value is per client), or nil if `attribute` is not that characteristic's value.
    func clientFeaturesBytes(of attribute: GATTAttribute, connection: UInt16) -> ArraySlice<UInt8>? {
        guard attribute.type == .clientSupportedFeatures else { return nil }
        let features = connections[connection]?.clientSupportedFeatures ?? []
        return features.isEmpty ? [0][...] : features[...]
    }

    /// A write of Client Supported Features (Part G §7.2): stored for this client only; a client may
    /// not clear a bit it has set, which is refused with Value Not Allowed.
    mutating func writeClientSupportedFeatures(value: ArraySlice<UInt8>, offset: Int, connection: UInt16) -> ATTErrorCode? {
        guard offset == 0 else { return .invalidOffset }
        guard !value.isEmpty else { return .invalidAttributeValueLength }
        let previous = connections[connection]?.clientSupportedFeatures ?? []
        for (index, old) in previous.enumerated() {
            let new = index < value.count ? value[value.startIndex + index] : 0
            if old & ~new != 0 { return .valueNotAllowed }
        }
        connections[connection]?.clientSupportedFeatures = Array(value)
        return nil
    }
}
