import BluewireCore

/// What a client has discovered about one server's attribute database: services, their
/// characteristics and the characteristics' descriptors.
///
/// A Service Changed indication (Core Vol 3 Part G §7.1), or a Database Out Of Sync error (§2.5.2.1),
/// makes handles invalid: `invalidate(_:)` drops everything that overlaps the affected range and says
/// which range to discover again.
public struct GATTClientCache: Hashable, Sendable {
    /// Discovered services, in handle order.
    public private(set) var services: [GATTService] = []
    /// Characteristics by the declaration handle of their service.
    public private(set) var characteristics: [UInt16: [GATTCharacteristic]] = [:]
    /// Descriptors by the declaration handle of their characteristic.
    public private(set) var descriptors: [UInt16: [GATTDescriptor]] = [:]

    public init() {}

    /// Records discovered services, replacing any cached service with the same declaration handle.
    public mutating func insert(services found: [GATTService]) {
        for service in found {
            if let i = services.firstIndex(where: { $0.handle == service.handle }) {
                if services[i] != service { forgetContents(of: services[i]) }
                services[i] = service
            } else {
                services.append(service)
            }
        }
        services.sort { $0.handle < $1.handle }
    }

    /// Records the characteristics discovered in `service`.
    public mutating func insert(characteristics found: [GATTCharacteristic], of service: GATTService) {
        characteristics[service.handle] = found
    }

    /// Records characteristics found by UUID (Discover Characteristics by UUID, §4.6.2): a subset of
    /// the service's, so it is merged with what is known of the service, in handle order.
    public mutating func merge(characteristics found: [GATTCharacteristic], of service: GATTService) {
        var merged = (characteristics[service.handle] ?? []).filter { old in !found.contains { $0.handle == old.handle } }
        merged += found
        characteristics[service.handle] = merged.sorted { $0.handle < $1.handle }
    }

    /// Records the descriptors discovered for `characteristic`.
    public mutating func insert(descriptors found: [GATTDescriptor], of characteristic: GATTCharacteristic) {
        descriptors[characteristic.handle] = found
    }

    /// The cached service whose definition contains `handle`.
    public func service(containing handle: UInt16) -> GATTService? {
        services.first { $0.handleRange.contains(handle) }
    }

    /// Every cached characteristic of type `uuid`.
    public func characteristics(withUUID uuid: BluetoothUUID) -> [GATTCharacteristic] {
        services.flatMap { characteristics[$0.handle] ?? [] }.filter { $0.uuid == uuid }
    }

    /// The value handle of the Service Changed characteristic (in the GATT service, 0x1801), if cached.
    public var serviceChangedValueHandle: UInt16? {
        for service in services where service.uuid == .genericAttribute {
            if let c = characteristics[service.handle]?.first(where: { $0.uuid == .serviceChanged }) {
                return c.valueHandle
            }
        }
        return nil
    }

    /// Drops every service that overlaps `range`, with its characteristics and descriptors.
    ///
    /// - Returns: the range to rediscover: `range` widened to cover the dropped services whole, since a
    ///   service discovery only finds services whose declaration lies in the searched range.
    @discardableResult
    public mutating func invalidate(_ range: ClosedRange<UInt16>) -> ClosedRange<UInt16> {
        var lower = range.lowerBound
        var upper = range.upperBound
        var kept: [GATTService] = []
        for service in services {
            if service.handleRange.overlaps(range) {
                lower = min(lower, service.handle)
                upper = max(upper, service.endHandle)
                forgetContents(of: service)
            } else {
                kept.append(service)
            }
        }
        services = kept
        return lower...upper
    }

    /// Applies a Service Changed indication value: decodes it and invalidates its range.
    /// - Returns: the range to rediscover (see `invalidate(_:)`).
    @discardableResult
    public mutating func handleServiceChanged(_ value: ArraySlice<UInt8>) throws(DecodeError) -> ClosedRange<UInt16> {
        invalidate(try ServiceChanged(value: value).range)
    }

    /// Forgets everything.
    public mutating func invalidateAll() {
        self = GATTClientCache()
    }

    private mutating func forgetContents(of service: GATTService) {
        for characteristic in characteristics[service.handle] ?? [] {
            descriptors[characteristic.handle] = nil
        }
        characteristics[service.handle] = nil
    }
}
