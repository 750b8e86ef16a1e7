import Testing
import BluewireCore
@testable import BluewireHCI

@Suite struct HCIEventTests {
    @Test func commandStatusCarriesStatusCreditsAndOpcode() throws {
        #expect(try HCIEvent(decoding: eventPayload("040f0400011d04")) == .commandStatus(
            CommandStatus(status: .success, numHCICommandPackets: 1, commandOpcode: .readRemoteVersionInformation)))
        guard case .commandStatus(let s) = try HCIEvent(decoding: eventPayload("040f040c010d20")) else {
            Issue.record("not Command Status")
            return
        }
        #expect(s.status.name == "Command Disallowed")
        #expect(s.commandOpcode == .leCreateConnection)
    }

    @Test func disconnectionCompleteReasonHasSpecName() throws {
        guard case .disconnectionComplete(let d) = try HCIEvent(decoding: eventPayload("04050400020013")) else {
            Issue.record("not Disconnection Complete")
            return
        }
        #expect(d.connectionHandle == 2)
        #expect(d.reason == .remoteUserTerminatedConnection)
        #expect(d.reason.description == "Remote User Terminated Connection (0x13)")
        #expect(HCIStatus(0x3E).name == "Connection Failed to be Established")
        #expect(HCIStatus(0x08).name == "Connection Timeout")
    }

    @Test func numberOfCompletedPacketsIteratesHandleCountPairs() throws {
        guard case .numberOfCompletedPackets(let n) = try HCIEvent(decoding: eventPayload("0413 09 02 0100 0300 4200 0100")) else {
            Issue.record("not NOCP")
            return
        }
        #expect(Array(n) == [.init(connectionHandle: 1, numCompletedPackets: 3), .init(connectionHandle: 0x42, numCompletedPackets: 1)])
        guard case .numberOfCompletedPackets(let one) = try HCIEvent(decoding: eventPayload("0413050100020100")) else { return }
        #expect(Array(one) == [.init(connectionHandle: 0x200, numCompletedPackets: 1)])
    }

    @Test func encryptionChangeV1AndV2() throws {
        #expect(try HCIEvent(decoding: eventPayload("0408 04 00 0100 01")) == .encryptionChange(
            EncryptionChange(status: .success, connectionHandle: 1, encryptionEnabled: 1)))
        let v2 = try HCIEvent(decoding: eventPayload("0459 05 00 0100 01 10"))
        #expect(v2 == .encryptionChange(EncryptionChange(status: .success, connectionHandle: 1, encryptionEnabled: 1, encryptionKeySize: 16)))
        #expect(v2.code == .encryptionChangeV2)
    }

    @Test func keyRefreshHardwareErrorAndRemoteVersion() throws {
        #expect(try HCIEvent(decoding: eventPayload("0430 03 00 4000")) == .encryptionKeyRefreshComplete(.init(status: .success, connectionHandle: 0x40)))
        #expect(try HCIEvent(decoding: eventPayload("0410 01 2a")) == .hardwareError(hardwareCode: 0x2A))
        guard case .readRemoteVersionInformationComplete(let v) = try HCIEvent(decoding: eventPayload("040c 08 00 0200 09 0f00 3412")) else {
            Issue.record("not Read Remote Version Information Complete")
            return
        }
        #expect(v.version == 9 && v.manufacturerName == 0x000F && v.subversion == 0x1234)
    }

    @Test func unknownEventKeepsCodeAndParameters() throws {
        let event = try HCIEvent(decoding: eventPayload("04ff 03 010203"))
        #expect(event == .unknown(code: HCIEventCode(rawValue: 0xFF), parameters: [1, 2, 3][...]))
        #expect(event.code.name == "Vendor Specific")
    }

    @Test func truncatedKnownEventNamesFieldAndOffset() {
        // Disconnection Complete that declares 4 parameter octets but whose Reason is missing.
        #expect(throws: DecodeError(.truncated(needed: 4, available: 3), layer: "hci", field: "Parameters", offset: 2)) {
            _ = try HCIEvent(decoding: eventPayload("0405040002 00"))
        }
        // Declared length 3: the event itself is too short for Reason.
        #expect(throws: DecodeError(.truncated(needed: 1, available: 0), layer: "hci", field: "Reason", offset: 5)) {
            _ = try HCIEvent(decoding: eventPayload("040503000200"))
        }
    }

    @Test func bytesBeyondParameterLengthAreIgnored() throws {
        #expect(try HCIEvent(decoding: eventPayload("0410 01 2a ffff")) == .hardwareError(hardwareCode: 0x2A))
    }
}
