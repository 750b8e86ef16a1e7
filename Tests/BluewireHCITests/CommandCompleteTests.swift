import Testing
import BluewireCore
@testable import BluewireHCI

@Suite struct CommandCompleteTests {
    func commandComplete(_ h4: String) throws -> CommandComplete {
        guard case .commandComplete(let cc) = try HCIEvent(decoding: eventPayload(h4)) else {
            Issue.record("not a Command Complete: \(h4)")
            return CommandComplete(numHCICommandPackets: 0, commandOpcode: HCIOpcode(rawValue: 0), returnParameters: [])
        }
        return cc
    }

    @Test func bumbleResetAnswerIsSuccessWithOneCredit() throws {
        let cc = try commandComplete("040e0401030c00")
        #expect(cc.numHCICommandPackets == 1)
        #expect(cc.commandOpcode == .reset)
        #expect(cc.status == .success)
        #expect(try cc.returnParameters(StatusReturnParameters.self).status == .success)
    }

    @Test func readLocalVersionFromMediaTekController() throws {
        let v = try commandComplete("040e0c010110000914270946000720").returnParameters(LocalVersionInformation.self)
        #expect(v.hciVersion == 0x09)
        #expect(v.hciSubversion == 0x2714)
        #expect(v.lmpVersion == 0x09)
        #expect(v.companyIdentifier == 0x0046)
        #expect(v.lmpSubversion == 0x2007)
    }

    @Test func leReadBufferSizeV1ReportsAclLengthAndCount() throws {
        let b = try commandComplete("040e0701022000fb0008").returnParameters(LEBufferSize.self)
        #expect(b.leACLDataPacketLength == 251)
        #expect(b.totalNumLEACLDataPackets == 8)
        #expect(b.isoDataPacketLength == nil)
    }

    @Test func leReadBufferSizeV2ReportsIsoBuffers() throws {
        let b = try commandComplete("040e0a01602000fb000f fb0004").returnParameters(LEBufferSize.self)
        #expect(b.leACLDataPacketLength == 251 && b.totalNumLEACLDataPackets == 15)
        #expect(b.isoDataPacketLength == 251 && b.totalNumISODataPackets == 4)
    }

    @Test func readBufferSizeAndBDADDR() throws {
        let b = try commandComplete("040e0b01051000fd03b806000100").returnParameters(BufferSize.self)
        #expect(b.aclDataPacketLength == 1021 && b.totalNumACLDataPackets == 6 && b.synchronousDataPacketLength == 0xB8)
        let a = try commandComplete("040e0a01091000adadc2b2ec74").returnParameters(ReadBDADDRReturn.self)
        #expect(a.address.description == "74:EC:B2:C2:AD:AD")
    }

    @Test func leFeaturesOfRealControllerIncludeDLEAnd2MAndExtendedAdvertising() throws {
        let f = try commandComplete("040e0c01032000fd7f010000000000").returnParameters(LELocalSupportedFeatures.self).leFeatures
        #expect(f.contains(.leEncryption))
        #expect(f.contains(.leDataPacketLengthExtension))
        #expect(f.contains(.le2MPHY))
        #expect(f.contains(.leCodedPHY))
        #expect(f.contains(.leExtendedAdvertising))
        #expect(!f.contains(.connectionParametersRequest))
    }

    @Test func supportedCommandsBitmapAnswersPerCommand() throws {
        let cc = try commandComplete(
            "040e4401021000ffffff03ceffefffffffff7ff20fe8fe3ff783ff1c00000061ffffff7fbe20f5fff0ffffffffff07000000000000000000000000000000000000000000000000")
        let s = try cc.returnParameters(LocalSupportedCommands.self)
        #expect(s.octet(0) == 0xFF && s.octet(3) == 0x03 && s.octet(63) == 0)
        #expect(s.supports(.reset) == true)
        #expect(s.supports(.leSetExtendedAdvertisingParameters) == true)  // octet 36 = 0xFF
        #expect(s.supports(.leSetExtendedScanParameters) == true)  // octet 37 = 0xFF
        #expect(s.supports(.leReadBufferSizeV2) == false)  // octet 41 = 0x00
        #expect(s.supports(octet: 3, bit: 2) == false)
        #expect(s.supports(HCIOpcode(rawValue: 0xFC00)) == nil)
        #expect(s == LocalSupportedCommands(octets: Array(cc.returnParameters.dropFirst())))
    }

    @Test func advertisingSetLimitsAndSuggestedDataLength() throws {
        #expect(try commandComplete("040e06013a2000c000").returnParameters(LEMaximumAdvertisingDataLength.self).maxAdvertisingDataLength == 192)
        #expect(try commandComplete("040e05013b200008").returnParameters(LENumberOfSupportedAdvertisingSets.self).numSupportedAdvertisingSets == 8)
        let d = try commandComplete("040e0801232000fb009042").returnParameters(LESuggestedDefaultDataLength.self)
        #expect(d.suggestedMaxTxOctets == 251 && d.suggestedMaxTxTime == 0x4290)
        let phy = try commandComplete("040e08013020000100 0202").returnParameters(LEReadPHYReturn.self)
        #expect(phy.connectionHandle == 1 && phy.txPHY == 2 && phy.rxPHY == 2)
    }

    @Test func bumbleStatusOnlyAnswerToSetDataLengthIsATypedTruncation() throws {
        let cc = try commandComplete("040e0401222001")
        #expect(cc.status == .unknownHCICommand)
        #expect(throws: DecodeError(.truncated(needed: 2, available: 0), layer: "hci", field: "Connection_Handle", offset: 6)) {
            _ = try cc.returnParameters(ConnectionHandleReturnParameters.self)
        }
    }

    @Test func commandCompleteWithNoReturnParametersHasNoStatus() throws {
        let cc = try commandComplete("040e03010000")
        #expect(cc.commandOpcode.rawValue == 0 && cc.status == nil && cc.numHCICommandPackets == 1)
    }
}
