import BluewireCore
import BluewireHCI

// HCI event decoder (and command decoder), fed what a controller or a capture can send.
//
// Input: a sequence of H4 packets, each self-delimited by its own header (a single packet is the
// common case; the seeds are packets from the real captures). Type 0x01 is a command packet, anything
// else is decoded as an event (the type byte is skipped). A packet whose header declares more bytes
// than are left gets the rest of the input (the truncation paths).
//
// Invariants checked:
// - decoding never traps; an error's offset lies inside the packet;
// - every slice the decoder returns lies inside the packet (zero-copy, no out-of-range views);
// - bytes after Parameter_Total_Length do not change the decoded event;
// - report lists: validCount ≤ Num_Reports, iteration yields exactly validCount reports, and `error`
//   is set exactly when validCount < Num_Reports; every report's AD structures lie inside its data;
// - commands: decode → encode → decode gives the same command;
// - the events also drive CommandFlow and ControllerBringUp: at most one command in flight, credits
//   within 0…255, and a finished bring-up always has ACL buffers.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var index = 0
    var driver = BringUpDriver()
    while index < bytes.count {
        let type = bytes[index]
        let start = index + 1
        let headerLength = type == 0x01 ? 3 : 2
        var end = bytes.count
        if bytes.count - start >= headerLength {
            let declared = Int(bytes[start + headerLength - 1])
            end = min(bytes.count, start + headerLength + declared)
        }
        let packet = bytes[start..<end]
        if type == 0x01 {
            checkCommand(packet)
        } else if let event = checkEvent(packet) {
            driver.handle(event)
        }
        index = end
    }
    return 0
}

func inside(_ slice: ArraySlice<UInt8>, _ packet: ArraySlice<UInt8>, _ what: String) {
    require(slice.isEmpty || (slice.startIndex >= packet.startIndex && slice.endIndex <= packet.endIndex),
            "\(what) \(slice.startIndex)..<\(slice.endIndex) outside packet \(packet.startIndex)..<\(packet.endIndex)")
}

func checkError(_ error: DecodeError, _ packet: ArraySlice<UInt8>) {
    require(error.offset >= 0 && error.offset <= packet.count, "error offset \(error.offset) outside \(packet.count)-byte packet: \(error)")
    _ = error.description
}

func checkCommand(_ packet: ArraySlice<UInt8>) {
    let command: HCICommand
    do {
        command = try HCICommand(decoding: packet)
    } catch {
        checkError(error, packet)
        return
    }
    let encoded = command.encoded
    do {
        let again = try HCICommand(decoding: encoded[...])
        require(again == command, "command round trip differs: \(command) -> \(again)")
    } catch {
        require(false, "re-encoded command \(command) does not decode: \(error)")
    }
    _ = command.packet
}

func checkEvent(_ packet: ArraySlice<UInt8>) -> HCIEvent? {
    let event: HCIEvent
    do {
        event = try HCIEvent(decoding: packet)
    } catch {
        checkError(error, packet)
        return nil
    }
    _ = event.code
    // Trailing bytes past Parameter_Total_Length are not part of the event.
    var padded = Array(packet)
    padded.append(contentsOf: [0xA5, 0x5A, 0xFF])
    if let again = try? HCIEvent(decoding: padded[...]) {
        require(again.code == event.code, "trailing bytes changed the event code")
    } else {
        require(false, "trailing bytes made a valid event fail")
    }
    switch event {
    case .commandComplete(let cc):
        inside(cc.returnParameters, packet, "return parameters")
        decodeReturnParameters(cc)
    case .numberOfCompletedPackets(let n):
        inside(n.entries, packet, "completed packets")
        var count = 0
        for entry in n {
            require(entry.connectionHandle <= 0x0FFF, "handle not masked")
            count += 1
        }
        require(count == Int(n.numHandles), "Num_Handles \(n.numHandles) but \(count) entries")
    case .leMeta(let meta):
        _ = meta.subeventCode
        switch meta {
        case .advertisingReport(let list):
            checkList(list, packet) { report in
                inside(report.data, packet, "report data")
                checkAD(report.advertisingData, report.data)
            }
        case .extendedAdvertisingReport(let list):
            checkList(list, packet) { report in
                inside(report.data, packet, "extended report data")
                _ = report.dataStatus
                checkAD(report.advertisingData, report.data)
            }
        case .directedAdvertisingReport(let list):
            checkList(list, packet) { _ in }
        case .unknown(_, let parameters):
            inside(parameters, packet, "LE meta parameters")
        default:
            break
        }
    case .unknown(_, let parameters):
        inside(parameters, packet, "event parameters")
    default:
        break
    }
    return event
}

func checkList<R: LEReport>(_ list: LEReportList<R>, _ packet: ArraySlice<UInt8>, _ body: (R) -> Void) {
    require(list.validCount <= Int(list.numReports), "validCount \(list.validCount) > Num_Reports \(list.numReports)")
    require((list.error == nil) == (list.validCount == Int(list.numReports)),
            "error \(String(describing: list.error)) with \(list.validCount)/\(list.numReports) valid reports")
    if let error = list.error { checkError(error, packet) }
    var count = 0
    for report in list {
        body(report)
        count += 1
    }
    require(count == list.validCount, "iterated \(count) reports, validCount \(list.validCount)")
}

func checkAD(_ ad: AdvertisingData, _ data: ArraySlice<UInt8>) {
    var iterator = ad.makeIterator()
    var covered = 0
    while let structure = iterator.next() {
        inside(structure.data, data, "AD structure")
        covered += structure.data.count + 2
        _ = structure.value
    }
    require(covered <= data.count, "AD structures cover \(covered) of \(data.count) bytes")
    require((iterator.error == nil) == (ad.error == nil), "AdvertisingData.error disagrees with its iterator")
    _ = ad.localName
    _ = ad.serviceUUIDs
    _ = ad.serviceData
    _ = ad.manufacturerSpecificData
}

func decodeReturnParameters(_ cc: CommandComplete) {
    _ = try? cc.returnParameters(StatusReturnParameters.self)
    _ = try? cc.returnParameters(LocalVersionInformation.self)
    _ = try? cc.returnParameters(LocalSupportedCommands.self)
    _ = try? cc.returnParameters(LocalSupportedFeatures.self)
    _ = try? cc.returnParameters(ReadBDADDRReturn.self)
    _ = try? cc.returnParameters(BufferSize.self)
    _ = try? cc.returnParameters(LEBufferSize.self)
    _ = try? cc.returnParameters(LELocalSupportedFeatures.self)
    _ = try? cc.returnParameters(LEMaximumAdvertisingDataLength.self)
    _ = try? cc.returnParameters(LENumberOfSupportedAdvertisingSets.self)
    _ = try? cc.returnParameters(LESuggestedDefaultDataLength.self)
    _ = try? cc.returnParameters(LEReadPHYReturn.self)
    _ = try? cc.returnParameters(ConnectionHandleReturnParameters.self)
    _ = try? cc.returnParameters(LESetExtendedAdvertisingParametersReturn.self)
}

/// Runs controller bring-up with the fuzzed events as the controller's answers.
struct BringUpDriver {
    var flow = CommandFlow()
    var bringUp = ControllerBringUp(randomAddress: BluetoothAddress(value: 0xC0_11_22_33_44_55, type: .random))
    var done = false
    var now = MonotonicInstant.zero

    init() {
        if case .send(let command) = bringUp.start() { flow.enqueue(command) }
        _ = flow.nextToSend(now: now)
    }

    mutating func handle(_ event: HCIEvent) {
        now = now + .milliseconds(1)
        guard let completion = flow.handle(event) else { return check() }
        require(!done, "a command completed after bring-up ended")
        switch bringUp.handle(completion.result) {
        case .send(let command):
            flow.enqueue(command)
        case .finished(let info):
            done = true
            require(info.leACLDataPacketLength > 0 && info.totalNumLEACLDataPackets > 0, "finished without ACL buffers: \(info)")
        case .failed:
            done = true
        }
        _ = flow.nextToSend(now: now)
        check()
    }

    func check() {
        require(flow.inFlight.count <= 1, "bring-up has \(flow.inFlight.count) commands in flight")
        require(flow.credits >= 0 && flow.credits <= 255, "credits \(flow.credits)")
        require(flow.queuedCount <= 1, "bring-up queued \(flow.queuedCount) commands")
    }
}
