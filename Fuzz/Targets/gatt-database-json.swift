import BluewireCore
import BluewireGATT

// The JSON parser and the GATT database file loader (`bluewire serve --db FILE.json`), fed any bytes.
//
// Invariants checked (never a trap):
// - an error names an offset inside the input (and a line and column from 1);
// - JSON that parses, written back with JSONWriter (compact and spaced), parses to an equal value;
// - a database that loads, exported with `exportJSON()` and loaded again, is the same attribute table
//   (handles, types, permissions, values), as the export's documentation promises.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))[...]
    do {
        let value = try JSONParser.parse(bytes)
        for style in [JSONWriter.Style.compact, .spaced] {
            let text = JSONWriter.serialize(value, style: style)
            do {
                let again = try JSONParser.parse(text)
                require(again == value, "JSON round trip (\(style)) differs:\n\(text)")
            } catch {
                require(false, "written JSON does not parse (\(error)):\n\(text)")
            }
        }
    } catch {
        require(error.offset >= 0 && error.offset <= bytes.count && error.line >= 1 && error.column >= 1,
                "JSON error position \(error.offset) line \(error.line) column \(error.column)")
        _ = error.description
    }

    let database: GATTDatabase
    do {
        database = try GATTDatabase(jsonBytes: bytes)
    } catch {
        require(error.offset >= 0 && error.offset <= bytes.count, "database file error at \(error.offset) of \(bytes.count)")
        _ = error.description
        return 0
    }
    let exported = database.exportJSON()
    do {
        let again = try GATTDatabase(json: exported)
        require(again.attributes.count == database.attributes.count, "export round trip changed the attribute count")
        for (a, b) in zip(database.attributes, again.attributes) {
            require(a.handle == b.handle && a.type == b.type && a.permissions == b.permissions && (a.cachedValue ?? []) == (b.cachedValue ?? []),
                    "export round trip changed attribute 0x\(hex(a.handle, width: 4))")
        }
    } catch {
        require(false, "exported database does not load (\(error)):\n\(exported)")
    }
    return 0
}
