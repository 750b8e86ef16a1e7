import BluewireCore
import BluewireHostEngine
import BluewireSMP
import Testing

/// Keypress Notifications (Core Vol 3 Part H §3.5.8, §2.3.5.6.3) between two engines on `LinkedEngines`:
/// sent by the side that enters the passkey and passed on by the other only when both set the Keypress bit.
@Suite("Host engine: Keypress Notifications during Passkey Entry")
struct SecurityKeypressEngineTests {
    static func keypresses(_ events: [HostEngineEvent]) -> [KeypressNotificationType] {
        events.compactMap { if case .keypress(_, let type) = $0 { return type }; return nil }
    }

    @Test("both set the Keypress bit: the typing side's notifications reach the displaying side; one side without it: none")
    func keypressesOnlyWhenBothAgree() throws {
        for displayingSideAgrees in [true, false] {
            var link = try LinkedEngines(
                central: PairingConfiguration(ioCapability: .keyboardOnly, mitmRequired: true, keypressNotifications: true),
                peripheral: PairingConfiguration(
                    ioCapability: .displayOnly, mitmRequired: true, keypressNotifications: displayingSideAgrees))
            let pair = link.central.perform(.pair(connection: link.handle))
            link.pump()
            let shown = try #require(link.peripheral.takeEvents().passkeyDisplayed)
            #expect(link.central.takeEvents() == [.passkeyRequest(connection: link.handle)])

            let typed: [KeypressNotificationType] = [.passkeyEntryStarted, .passkeyDigitEntered, .passkeyDigitEntered,
                                                     .passkeyDigitErased, .passkeyEntryCompleted]
            let requests = typed.map { link.central.perform(.keypress(connection: link.handle, $0)) }
            link.pump()
            #expect(requests.allSatisfy { link.central.result($0) == .success(.done) })
            let seen = link.peripheral.takeEvents()
            #expect(Self.keypresses(seen) == (displayingSideAgrees ? typed : []), "\(seen)")
            if displayingSideAgrees {
                #expect(seen.first == .keypress(connection: link.handle, type: .passkeyEntryStarted))
            }
            // The displaying side enters nothing: its keypress sends nothing.
            _ = link.peripheral.perform(.keypress(connection: link.handle, .passkeyDigitEntered))
            link.pump()
            #expect(Self.keypresses(link.central.takeEvents()).isEmpty)

            _ = link.central.perform(.passkeyReply(connection: link.handle, passkey: shown))
            link.pump()
            #expect(link.central.result(pair) == .success(.secured(.secureConnectionsAuthenticated)))
            // After pairing there is no passkey entry to report on.
            let late = link.central.perform(.keypress(connection: link.handle, .passkeyDigitEntered))
            link.pump()
            #expect(link.central.result(late) == .failure(.security(.noPairingInProgress)))
            #expect(Self.keypresses(link.peripheral.takeEvents()).isEmpty)
        }
    }

    @Test("legacy Passkey Entry with both bits set: notifications pass too; Just Works never sends them")
    func legacyAndJustWorks() throws {
        var link = try LinkedEngines(
            central: PairingConfiguration(
                ioCapability: .keyboardOnly, mitmRequired: true, secureConnections: false, keypressNotifications: true),
            peripheral: PairingConfiguration(
                ioCapability: .displayOnly, mitmRequired: true, secureConnections: false, keypressNotifications: true))
        let pair = link.central.perform(.pair(connection: link.handle))
        link.pump()
        let shown = try #require(link.peripheral.takeEvents().passkeyDisplayed)
        _ = link.central.perform(.keypress(connection: link.handle, .passkeyCleared))
        link.pump()
        #expect(Self.keypresses(link.peripheral.takeEvents()) == [.passkeyCleared])
        _ = link.central.perform(.passkeyReply(connection: link.handle, passkey: shown))
        link.pump()
        #expect(link.central.result(pair) == .success(.secured(.authenticated)))

        var justWorks = try LinkedEngines(
            central: PairingConfiguration(ioCapability: .noInputNoOutput, keypressNotifications: true),
            peripheral: PairingConfiguration(ioCapability: .noInputNoOutput, keypressNotifications: true))
        _ = justWorks.central.perform(.pair(connection: justWorks.handle))
        _ = justWorks.central.perform(.keypress(connection: justWorks.handle, .passkeyEntryStarted))
        justWorks.pump()
        #expect(Self.keypresses(justWorks.peripheral.takeEvents()).isEmpty)
    }
}

/// LE legacy OOB (Core Vol 3 Part H §2.3.5.4) between two engines, the TK set in each one's configuration.
@Suite("Host engine: legacy OOB pairing")
struct LegacyOOBEngineTests {
    static let tk: [UInt8] = (0..<16).map { UInt8(0x31 &+ $0 &* 11) }

    @Test("same TK on both: authenticated legacy pairing, bonded, the next connection re-encrypts; another TK fails")
    func legacyOOB() throws {
        for sameKey in [true, false] {
            var other = Self.tk
            other[0] ^= 0x80
            var link = try LinkedEngines(
                central: PairingConfiguration(
                    ioCapability: .noInputNoOutput, secureConnections: false, legacyOOBTemporaryKey: Self.tk),
                peripheral: PairingConfiguration(
                    ioCapability: .noInputNoOutput, secureConnections: false, legacyOOBTemporaryKey: sameKey ? Self.tk : other))
            let pair = link.central.perform(.pair(connection: link.handle))
            link.pump()
            if sameKey {
                #expect(link.central.result(pair) == .success(.secured(.authenticated)))
                #expect(link.peripheral.engine.security(connection: link.handle)?.level == .authenticated)
                #expect(link.central.engine.bonds.first?.authenticated == true)
                link.disconnect()
                link.connect()
                let encrypt = link.central.perform(.encrypt(connection: link.handle))
                link.pump()
                #expect(link.central.result(encrypt) == .success(.secured(.authenticated)))
            } else {
                #expect(link.central.result(pair) == .failure(.security(.pairingFailed(.remote(.confirmValueFailed)))))
                #expect(link.encryptionStatuses.isEmpty)
                #expect(link.central.engine.bonds.isEmpty && link.peripheral.engine.bonds.isEmpty)
            }
        }
    }
}
