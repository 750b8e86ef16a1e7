import BluewireCore
import BluewireHCI

/// Summaries of HCI command packets (Core Vol 4 Part E §5.4.1, §7): the command's name and the
/// parameters a reader of a capture looks for first.
enum HCICommandDescription {
    static func describe(_ packet: ArraySlice<UInt8>, into d: inout PacketDescription) {
        let framed: HCICommandPacket
        do {
            framed = try HCICommandPacket(decoding: packet)
        } catch {
            if packet.count >= 2 {
                let s = packet.startIndex
                let opcode = HCIOpcode(rawValue: UInt16(packet[s]) | UInt16(packet[s &+ 1]) << 8)
                d.say(opcode.description)
                d.addHex("opcode", opcode.rawValue, shown: false)
            }
            d.fail(error)
            return
        }
        d.say(framed.opcode.description)
        d.addHex("opcode", framed.opcode.rawValue, shown: false)
        d.add("plen", framed.parameters.count, shown: false)
        let command: HCICommand
        do {
            command = try HCICommand(framed)
        } catch {
            d.fail(error)
            return
        }
        parameters(command, into: &d)
    }

    static func parameters(_ command: HCICommand, into d: inout PacketDescription) {
        switch command {
        case .leSetScanParameters(let p):
            d.add("type", p.scanType == 1 ? "active" : "passive")
            d.add("interval", p.scanInterval)
            d.add("window", p.scanWindow)
            d.add("own_address_type", p.ownAddressType)
            d.add("filter_policy", p.scanningFilterPolicy)
        case .leSetScanEnable(let p):
            d.add("enable", .bool(p.enable))
            d.add("filter_duplicates", .bool(p.filterDuplicates))
        case .leSetExtendedScanParameters(let p):
            d.add("own_address_type", p.ownAddressType)
            if let phy = p.le1M {
                d.add("type", phy.scanType == 1 ? "active" : "passive")
                d.add("interval", phy.scanInterval)
                d.add("window", phy.scanWindow)
            }
        case .leSetExtendedScanEnable(let p):
            d.add("enable", .bool(p.enable))
            d.add("filter_duplicates", p.filterDuplicates)
            d.add("duration", p.duration)
        case .leSetAdvertisingParameters(let p):
            d.add("interval_min", p.advertisingIntervalMin)
            d.add("interval_max", p.advertisingIntervalMax)
            d.add("type", p.advertisingType)
        case .leSetAdvertisingData(let p):
            AdvertisingReportDescription.advertisingData(p.advertisingData, into: &d)
        case .leSetScanResponseData(let p):
            AdvertisingReportDescription.advertisingData(p.scanResponseData, into: &d)
        case .leSetAdvertisingEnable(let p):
            d.add("enable", .bool(p.enable))
        case .leSetRandomAddress(let p):
            d.add("address", p.randomAddress.hexString)
        case .leCreateConnection(let p):
            d.add("peer", p.peerAddress.description)
            d.add("interval_min", p.connection.connectionIntervalMin)
            d.add("interval_max", p.connection.connectionIntervalMax)
            d.add("latency", p.connection.maxLatency)
            d.add("supervision_timeout", p.connection.supervisionTimeout)
        case .leExtendedCreateConnection(let p):
            d.add("peer", p.peerAddress.description)
        case .disconnect(let p):
            d.addHex("handle", p.connectionHandle)
            d.add("reason", p.reason.description)
        case .leConnectionUpdate(let p):
            d.addHex("handle", p.connectionHandle)
            d.add("interval_min", p.connection.connectionIntervalMin)
            d.add("interval_max", p.connection.connectionIntervalMax)
            d.add("latency", p.connection.maxLatency)
            d.add("supervision_timeout", p.connection.supervisionTimeout)
        case .leSetDataLength(let p):
            d.addHex("handle", p.connectionHandle)
            d.add("tx_octets", p.txOctets)
            d.add("tx_time", p.txTime)
        case .leWriteSuggestedDefaultDataLength(let p):
            d.add("tx_octets", p.suggestedMaxTxOctets)
            d.add("tx_time", p.suggestedMaxTxTime)
        case .leSetPHY(let p):
            d.addHex("handle", p.connectionHandle)
            d.addHex("tx_phys", p.txPHYs.rawValue, digits: 2)
            d.addHex("rx_phys", p.rxPHYs.rawValue, digits: 2)
        case .leSetDefaultPHY(let p):
            d.addHex("tx_phys", p.txPHYs.rawValue, digits: 2)
            d.addHex("rx_phys", p.rxPHYs.rawValue, digits: 2)
        case .leReadPHY(let p), .readRemoteVersionInformation(let p), .leReadRemoteFeatures(let p):
            d.addHex("handle", p.connectionHandle)
        case .setEventMask(let mask), .leSetEventMask(let mask):
            d.addHex("mask", mask.rawValue, digits: 16)
        case .raw(_, let parameters):
            if !parameters.isEmpty {
                d.add("parameters", hexString(parameters.prefix(32)) + (parameters.count > 32 ? "..." : ""))
            }
        default:
            break
        }
    }
}
