import Bluewire
import BluewireCore
import BluewireGATT
import BluewireHCI
import Foundation

/// `serve`'s lines for what the host engine reports: the same words as `print(_: PeripheralEvent)`
/// for centrals, reads, writes, subscriptions, indications and refusals, and the security lines
/// (passkey, comparison, encryption, paired, pairing failed).
extension ServeOutput {
    func connected(_ connection: UInt16, peer: BluetoothAddress) {
        emit(text: "connected \(h(connection)) \(peer)", json: ["event": "connected", "connection": Int(connection), "peer": "\(peer)"])
    }

    func mtu(_ connection: UInt16, _ mtu: Int) {
        emit(text: "mtu \(h(connection)) \(mtu)", json: ["event": "mtu", "connection": Int(connection), "mtu": mtu])
    }

    func read(_ connection: UInt16, handle: UInt16, offset: Int, value: [UInt8]?) {
        print(.read(PeripheralRead(connection: connection, handle: handle, offset: offset, value: value)))
    }

    func written(_ connection: UInt16, handle: UInt16, value: [UInt8]) {
        print(.write(PeripheralWrite(connection: connection, handle: handle, value: value, offset: 0, kind: nil)))
    }

    func server(_ event: GATTServerEvent) {
        switch event {
        case .mtuExchanged: break  // the bearer's mtuChanged reports it
        case .subscriptionChanged(let subscription): print(.subscriptionChanged(subscription))
        case .valueWritten(let connection, let handle, let value): written(connection, handle: handle, value: value)
        case .indicationConfirmed(let connection, let handle): print(.indicationConfirmed(connection: connection, handle: handle))
        case .indicationDropped(let connection, let handle): print(.indicationDropped(connection: connection, handle: handle))
        }
    }

    func refused(_ connection: UInt16, request: ATTOpcode, handle: UInt16, error: ATTErrorCode) {
        print(.requestRefused(connection: connection, request: request, handle: handle, error: error))
    }

    func advertising(on: Bool) {
        emit(text: on ? "advertising on" : "advertising off", json: ["event": on ? "advertising-on" : "advertising-off"])
    }

    // MARK: security

    /// Passkey Entry with this side displaying (Core Vol 3 Part H §2.3.5.3): the central's user types it.
    func passkeyShown(_ connection: UInt16, _ passkey: UInt32) {
        let text = PairOutput.passkeyText(passkey)
        emit(text: "passkey \(h(connection)) \(text) (type it on the central)",
             json: ["event": "passkey-display", "connection": Int(connection), "passkey": text])
    }

    /// Passkey Entry with this side entering: answered with --passkey, or refused without it.
    func passkeyRequested(_ connection: UInt16, answer: UInt32?) {
        let text = answer.map { "entered \(PairOutput.passkeyText($0)) (--passkey)" } ?? "refused (no --passkey)"
        var object: [String: any Sendable] = ["event": "passkey-request", "connection": Int(connection)]
        if let answer { object["passkey"] = PairOutput.passkeyText(answer) }
        emit(text: "passkey requested \(h(connection)): \(text)", json: object)
    }

    /// Numeric Comparison (§2.3.5.6.2): accepted with --yes, rejected without it.
    func comparison(_ connection: UInt16, _ value: UInt32, accepted: Bool) {
        let text = PairOutput.passkeyText(value)
        emit(text: "compare \(h(connection)) \(text): \(accepted ? "accepted (--yes)" : "rejected (no --yes)")",
             json: ["event": "numeric-comparison", "connection": Int(connection), "value": text, "accepted": accepted])
    }

    func encryptionChanged(_ connection: UInt16, level: LinkSecurityLevel, keySize: UInt8) {
        emit(text: "encryption \(h(connection)): level \(level.rawValue) (\(PairOutput.levelName(level))), key size \(keySize)",
             json: ["event": "encryption", "connection": Int(connection), "level": Int(level.rawValue),
                    "level_name": PairOutput.levelName(level), "key_size": Int(keySize)])
    }

    func paired(_ connection: UInt16, keys: HostBond, bonded: Bool, method: PairingMethod) {
        let methodName = Self.methodName(method, secureConnections: keys.secureConnections)
        let level: LinkSecurityLevel = keys.authenticated
            ? (keys.secureConnections ? .secureConnectionsAuthenticated : .authenticated) : .encryptedUnauthenticated
        var names: [String] = []
        if keys.longTermKey != nil || keys.localKeys.longTermKey != nil || keys.peerKeys.longTermKey != nil { names.append("LTK") }
        if keys.peerKeys.identityResolvingKey != nil { names.append("peer IRK") }
        if keys.peerKeys.signatureKey != nil { names.append("peer CSRK") }
        let keyText = names.isEmpty ? "no keys" : "keys " + names.joined(separator: " ")
        emit(text: "paired \(h(connection)) \(keys.peer): \(methodName), level \(level.rawValue) (\(PairOutput.levelName(level))), "
                + "key size \(keys.keySize), \(keyText), \(bonded ? "bonded" : "not bonded")",
             json: ["event": "paired", "connection": Int(connection), "peer": "\(keys.peer)", "method": methodName,
                    "level": Int(level.rawValue), "level_name": PairOutput.levelName(level), "key_size": Int(keys.keySize),
                    "keys": names, "bonded": bonded])
    }

    /// What `serve` offers for Enhanced ATT: where the feature characteristics are, SPSM 0x0027.
    func eatt(_ declaration: ServeEATT.Declaration, mtu: Int) {
        let client = declaration.clientSupportedFeatures.map { ", Client Supported Features \(h($0))" } ?? ""
        let bearerMTU = ServeEATT.bearerParameters(mtu: mtu).mtu
        emit(text: "eatt on SPSM 0x0027 (bearer MTU \(bearerMTU)): Server Supported Features \(h(declaration.serverSupportedFeatures))\(client)",
             json: ["event": "eatt", "spsm": 0x27, "mtu": bearerMTU, "server_supported_features": Int(declaration.serverSupportedFeatures),
                    "client_supported_features": declaration.clientSupportedFeatures.map { Int($0) } as (any Sendable)?])
    }

    /// An EATT bearer opened (a central's Enhanced Credit Based channel on 0x0027) or closed.
    func eattBearer(_ connection: UInt16, cid: UInt16, mtu: Int?) {
        if let mtu {
            emit(text: "eatt bearer \(h(connection)) cid \(h(cid)): ATT_MTU \(mtu)",
                 json: ["event": "eatt-bearer", "connection": Int(connection), "cid": Int(cid), "mtu": mtu])
        } else {
            emit(text: "eatt bearer closed \(h(connection)) cid \(h(cid))",
                 json: ["event": "eatt-bearer-closed", "connection": Int(connection), "cid": Int(cid)])
        }
    }

    func pairingFailed(_ connection: UInt16, _ failure: PairingFailure) {
        let reason: String
        switch failure {
        case .local(let why): reason = "\(why.name) (sent by serve)"
        case .remote(let why): reason = "\(why.name) (sent by the central)"
        default: reason = "\(failure)"
        }
        emit(text: "pairing failed \(h(connection)): \(reason)",
             json: ["event": "pairing-failed", "connection": Int(connection), "reason": reason])
    }

    /// "SC Numeric Comparison", "legacy Passkey Entry"...: the method as Core Vol 3 Part H §2.3.5 names it.
    static func methodName(_ method: PairingMethod, secureConnections: Bool) -> String {
        let name: String
        switch method {
        case .justWorks: name = "Just Works"
        case .numericComparison: name = "Numeric Comparison"
        case .passkeyEntry: name = "Passkey Entry"
        case .outOfBand: name = "Out of Band"
        }
        return (secureConnections ? "SC " : "legacy ") + name
    }
}
