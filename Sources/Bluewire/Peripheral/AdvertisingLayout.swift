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
    ///
    /// A name stays in the advertising data, where passive scanners and every scanner's first
    /// glance see it: complete when it fits beside the first service UUID, else shortened and marked
    /// so (Core Supplement Part A §1.2) with the complete name in the scan response. The service
    /// list follows it, complete or marked incomplete (§1.1), the whole list then in the scan
    /// response when it fits there.
    init(name: String?, services: [BluetoothUUID], extra: [ADElement]) throws(PeripheralError) {
        // Flags mark the device discoverable (Core Vol 3 Part C §9.2.4, §11.1.3).
        _ = add(.flags([.leGeneralDiscoverableMode, .brEdrNotSupported]), toResponse: false)
        if let name, !name.isEmpty {
            placeName(name, beside: services)
        } else {
            placeServices(services)
        }
        for element in extra where !add(element, toResponse: false) && !add(element, toResponse: true) {
            do { try dataBuilder.append(element) } catch {
                throw .advertisingData(error, scanResponse: false)
            }
        }
    }

    /// The name, leaving room in the advertising data for the first service UUID when there is one.
    private mutating func placeName(_ name: String, beside services: [BluetoothUUID]) {
        let whole = Self.size(.completeLocalName(name))
        let allServices = services.isEmpty ? 0 : Self.size(.serviceUUIDs(services, complete: true))
        let firstService = services.isEmpty ? 0 : Self.size(.serviceUUIDs([services[0]], complete: false))
        if whole + allServices <= dataBuilder.remaining {
            // Everything fits: the complete list, then the name (the order Bluewire always used,
            // which recorded sessions replay).
            if !services.isEmpty { _ = add(.serviceUUIDs(services, complete: true), toResponse: false) }
            _ = add(.completeLocalName(name), toResponse: false)
            return
        }
        if whole + firstService <= dataBuilder.remaining {
            _ = add(.completeLocalName(name), toResponse: false)
            placeServices(services)
            return
        }
        defer { placeServices(services) }
        // Shortened to what is left beside the first UUID, or to the whole room if not even one
        // character fits there.
        var room = dataBuilder.remaining - firstService - 2
        if room < 1 { room = dataBuilder.remaining - 2 }
        var shortened = Substring(name)
        while !shortened.isEmpty && shortened.utf8.count > room { shortened = shortened.dropLast() }
        if !shortened.isEmpty { _ = add(.shortenedLocalName(String(shortened)), toResponse: false) }
        _ = add(.completeLocalName(name), toResponse: true)
    }

    /// The service UUIDs: as many as fit the advertising data (marked incomplete if not all), the
    /// whole list in the scan response when the advertising data could not hold it.
    private mutating func placeServices(_ services: [BluetoothUUID]) {
        guard !services.isEmpty, !add(.serviceUUIDs(services, complete: true), toResponse: false) else { return }
        let wholeInResponse = add(.serviceUUIDs(services, complete: true), toResponse: true)
        var kept = services
        while kept.count > 1 {
            kept.removeLast()
            if add(.serviceUUIDs(kept, complete: false), toResponse: false) { return }
        }
        if !wholeInResponse { _ = add(.serviceUUIDs(kept, complete: false), toResponse: true) }
    }

    /// Octets `element` takes in advertising data (its AD structures with their headers).
    private static func size(_ element: ADElement) -> Int {
        (try? AdvertisingDataBuilder.encode([element], maxLength: AdvertisingDataBuilder.extendedMaxLength))?.count ?? Int.max / 2
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
