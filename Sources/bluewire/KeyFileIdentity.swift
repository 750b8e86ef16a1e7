import Bluewire

extension KeyFile {
    /// Peers find their keys by our address: a bond file is one local identity and brings the address
    /// its bonds were made with. `live` with that address when no --own-address was given; an error
    /// when --own-address names another one while the file holds bonds.
    static func identity(of contents: Contents, path: String, live: LiveOptions) throws(CLIError) -> LiveOptions {
        guard let stored = contents.localAddress else { return live }
        var live = live
        if let own = live.address {
            if let parsed = BluetoothAddress(parsing: own), parsed.value != stored.value, !contents.bonds.isEmpty {
                throw CLIError("bond file \(path) holds the bonds of local address \(addressText(stored)), "
                    + "not --own-address \(own): give another --keys file for another identity")
            }
        } else {
            live.address = stored.hexString
        }
        return live
    }
}
