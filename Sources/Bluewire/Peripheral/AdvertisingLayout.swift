import BluewireCore
import BluewireHCI

/// Places a name, service UUIDs and extra AD structures into 31-octet advertising data and scan
/// response data: what matters for discovery (Flags, services) first, the name wherever it fits.
struct AdvertisingLayout {
    var data: [ADElement] = []
    var scanResponse: [ADElement] = []

    /// Fails with the first extra structure that fits neither buffer.
    init(name: String?, services: [BluetoothUUID], extra: [ADElement]) throws(PeripheralError) {
        let limit = AdvertisingDataBuilder.legacyMaxLength
        var dataBuilder = AdvertisingDataBuilder(maxLength: limit)
        var responseBuilder = AdvertisingDataBuilder(maxLength: limit)
        func place(_ element: ADElement) -> Bool {
            if (try? dataBuilder.append(element)) != nil {
                data.append(element)
                return true
            }
            // A scan response only reaches scanners of scannable advertising; ADV_IND is scannable.
            if (try? responseBuilder.append(element)) != nil {
                scanResponse.append(element)
                return true
            }
            return false
        }
        // Flags mark the device discoverable; required in connectable, discoverable advertising
        // (Core Vol 3 Part C §9.2.4, §11.1.3).
        _ = place(.flags([.leGeneralDiscoverableMode, .brEdrNotSupported]))
        if !services.isEmpty && !place(.serviceUUIDs(services, complete: true)) {
            var kept = services
            while !kept.isEmpty {
                kept.removeLast()
                if !kept.isEmpty && place(.serviceUUIDs(kept, complete: false)) { break }
            }
        }
        if let name, !name.isEmpty, !place(.completeLocalName(name)) {
            var shortened = Substring(name)
            while !shortened.isEmpty {
                shortened = shortened.dropLast()
                if !shortened.isEmpty && place(.shortenedLocalName(String(shortened))) { break }
            }
        }
        for element in extra where !place(element) {
            // Report the error the data buffer gives, with the room the larger buffer has left.
            do { try dataBuilder.append(element) } catch {
                throw .advertisingData(error, scanResponse: false)
            }
        }
    }
}
