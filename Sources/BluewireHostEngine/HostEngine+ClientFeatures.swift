import BluewireATT
import BluewireCore
import BluewireGATT

// Left out of builds with BLUEWIRE_NO_CENTRAL (the peripheral firmware image): a device that is never
// a GATT client has no features to declare.
#if !BLUEWIRE_NO_CENTRAL

/// What the engine's GATT client does by itself when an operation finishes.
///
/// - After a discovery that finds the peer's Client Supported Features characteristic (0x2B29), it
///   writes `HostEngineConfiguration.clientFeatures` there once per link, as BlueZ does: Core Vol 3
///   Part G §7.2 has a client declare what it supports, and a server may send Multiple Handle Value
///   Notifications only to a client that declared them (§4.10.2). The write is queued behind the
///   application's operations and completes no request; a refusal is ignored (the server then just
///   does not know, which is the state before the write).
/// - A server that answered Read Multiple Variable Length with Request Not Supported is remembered,
///   so later multiple reads on the link go value by value from the start.
extension HostEngine {
    mutating func clientOperationFinished(
        _ handle: UInt16, _ operation: ClientOperation, _ result: Result<HostCompletion, HostEngineError>
    ) {
        if case .readMultiple(let read) = operation.procedure, read.variableLengthRefused {
            links[handle]?.readMultipleVariableRefused = true
        }
        guard case .success(.services(let services)) = result else { return }
        writeClientFeatures(handle, services)
    }

    mutating func writeClientFeatures(_ handle: UInt16, _ services: [DiscoveredService]) {
        let features = configuration.clientFeatures
        guard !features.isEmpty, let link = links[handle], !link.clientFeaturesWritten else { return }
        let characteristic = services.lazy.flatMap { $0.characteristics }.first {
            $0.characteristic.uuid == .clientSupportedFeatures && $0.characteristic.properties.contains(.write)
        }
        guard let characteristic else { return }
        links[handle]?.clientFeaturesWritten = true
        let write = WriteCharacteristicValue(
            handle: characteristic.characteristic.valueHandle, value: [features.rawValue], mtu: link.bearer.mtu)
        // Started by the caller of finishClientOperation, which always starts the queue's next one.
        links[handle]?.clientOperations.append(ClientOperation(id: nil, procedure: .write(write)))
    }
}

#endif  // !BLUEWIRE_NO_CENTRAL
