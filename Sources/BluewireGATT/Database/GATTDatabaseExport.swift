import BluewireCore

extension GATTDatabase {
    /// The database as an attribute-table JSON file (the `attributes` form of `init(json:)`), one
    /// attribute per line, handles kept exactly. Loading the result gives back the same table.
    ///
    /// A dynamic value has no bytes to write without a connection to read it for; it is exported
    /// with an empty value.
    public func exportJSON() -> String {
        var out: [UInt8] = []
        JSONWriter.appendASCII("{ \"attributes\": [", to: &out)
        for (i, attribute) in attributes.enumerated() {
            out.append(contentsOf: i == 0 ? [0x0A] : [UInt8(ascii: ","), 0x0A])
            JSONWriter.appendASCII("  ", to: &out)
            JSONWriter.write(GATTDatabase.fileObject(for: attribute), style: .spaced, into: &out)
        }
        if !attributes.isEmpty { out.append(0x0A) }
        JSONWriter.appendASCII("] }\n", to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// One attribute-table entry.
    public static func fileObject(for attribute: GATTAttribute) -> JSONValue {
        var perms: [JSONValue] = []
        for name in attribute.permissions.fileNames { perms.append(.string(name)) }
        return .object([
            JSONMember("handle", .string("0x" + hex(attribute.handle, width: 4))),
            JSONMember("type", .string(fileString(for: attribute.type))),
            JSONMember("value", .string(hexString(attribute.cachedValue ?? []))),
            JSONMember("perms", .array(perms)),
        ])
    }

    /// `0x2a00` for 16-bit UUIDs, the lower-case 36-character form otherwise (a 32-bit UUID is
    /// written in full, as ATT carries it).
    public static func fileString(for uuid: BluetoothUUID) -> String {
        if let short = uuid.uint16 { return "0x" + hex(short, width: 4) }
        return lowercased(uuid.uuidString)
    }

    static func lowercased(_ text: String) -> String {
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            bytes.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
