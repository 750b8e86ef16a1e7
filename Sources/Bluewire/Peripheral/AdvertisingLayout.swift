import BluewireCore
import BluewireHCI

/// Places a name, service UUIDs and extra AD structures into 31-octet advertising data and scan
/// response data. Passive scanners see only the advertising data, so what identifies the device
/// goes there first; a scan response (active scanners) completes what had to be cut.
struct AdvertisingLayout {
    var data: [ADElement] = []
    var scanResponse: [ADElement] = []
    private var dataBuilder = AdvertisingDataBuilder(maxLength: AdvertisingDataBuilder.legacyMaxLength)
    private var responseBuilder = AdvertisingDataBuilder(maxLength: AdvertisingDataBuilder.legacyMaxLength)

    /// Fails with the first extra structure that fits neither buffer.
    init(name: String?, services: [BluetoothUUID], extra: [ADElement]) throws(PeripheralError) {
        // Flags mark the device discoverable (Core Vol 3 Part C §9.2.4, §11.1.3).
        _ = add(.flags([.leGeneralDiscoverableMode, .brEdrNotSupported]), toResponse: false)
        if !services.isEmpty && !add(.serviceUUIDs(services, complete: true), toResponse: false) {
            // Core Supplement Part A §1.1: a partial list is marked incomplete. The whole list goes to
            // the scan response when it fits there.
            let wholeInResponse = add(.serviceUUIDs(services, complete: true), toResponse: true)
            var kept = services
            while kept.count > 1 {
                kept.removeLast()
                if add(.serviceUUIDs(kept, complete: false), toResponse: false) { break }
            }
            if !wholeInResponse && kept.count == 1 { _ = add(.serviceUUIDs(kept, complete: false), toResponse: true) }
        }
        if let name, !name.isEmpty, !add(.completeLocalName(name), toResponse: false),
           !add(.completeLocalName(name), toResponse: true) {
            // Supplement §1.2: a shortened name is marked as such; it fills what the data has left.
            var shortened = Substring(name)
            while shortened.count > 1 {
                shortened = shortened.dropLast()
                if add(.shortenedLocalName(String(shortened)), toResponse: false) { break }
            }
        }
        for element in extra where !add(element, toResponse: false) && !add(element, toResponse: true) {
            do { try dataBuilder.append(element) } catch {
                throw .advertisingData(error, scanResponse: false)
            }
        }
    }

    /// Appends `element` to the advertising data or the scan response if it fits there.
    private mutating func add(_ element: ADElement, toResponse: Bool) -> Bool {
        if toResponse {
            guard (try? responseBuilder.append(element)) != nil else { return false }
            scanResponse.append(element)
        } else {
            guard (try? dataBuilder.append(element)) != nil else { return false }
            data.append(element)
        }
        return true
    }
}
