import BluewireCore
import Testing

@testable import BluewireATT

/// Client-side transactions scripted byte for byte: what the bearer must send, what the peer answers.
@Suite struct ATTBearerClientTests {
    @Test func secondRequestWaitsUntilTheFirstIsAnswered() throws {
        var bearer = ATTBearer()
        let read = try bearer.send(request: .readRequest(handle: 3), now: .zero)
        let write = try bearer.send(request: .writeRequest(handle: 5, value: [0x01, 0x00]), now: .zero)
        #expect(drain(&bearer).sent == [[0x0A, 0x03, 0x00]], "only one request may be outstanding")
        #expect(bearer.pendingRequestCount == 2)

        bearer.receive([0x0B, 0x42, 0x57], now: at(seconds: 1))
        let afterRead = drain(&bearer)
        #expect(afterRead.events == [.response(read, .readResponse(value: [0x42, 0x57]))])
        #expect(afterRead.sent == [[0x12, 0x05, 0x00, 0x01, 0x00]])

        bearer.receive([0x13], now: at(seconds: 2))
        #expect(drain(&bearer) == ([], [.response(write, .writeResponse)]))
        #expect(bearer.pendingRequestCount == 0 && bearer.deadline == nil)
    }

    @Test func errorResponseIsMatchedByItsRequestOpcode() throws {
        var bearer = ATTBearer()
        let id = try bearer.send(request: .readByGroupTypeRequest(startingHandle: 1, endingHandle: 0xFFFF, attributeGroupType: .primaryService), now: .zero)
        #expect(drain(&bearer).sent == [[0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28]])
        // An Error Response naming another request belongs to no transaction.
        bearer.receive([0x01, 0x0A, 0x03, 0x00, 0x0A], now: .zero)
        #expect(drain(&bearer).events == [.unexpectedPDU(.errorResponse)])
        bearer.receive([0x01, 0x10, 0x01, 0x00, 0x0A], now: .zero)
        #expect(drain(&bearer).events == [
            .response(id, .errorResponse(requestOpcode: .readByGroupTypeRequest, handle: 1, error: .attributeNotFound)),
        ])
    }

    @Test func responseMatchingNoRequestIsDroppedAndReported() throws {
        var bearer = ATTBearer()
        bearer.receive([0x0B, 0x01], now: .zero)
        #expect(drain(&bearer) == ([], [.unexpectedPDU(.readResponse)]))
        let id = try bearer.send(request: .readRequest(handle: 3), now: .zero)
        _ = drain(&bearer)
        bearer.receive([0x13], now: .zero)
        #expect(drain(&bearer).events == [.unexpectedPDU(.writeResponse)], "a Write Response does not answer a Read Request")
        bearer.receive([0x0B, 0x07], now: .zero)
        #expect(drain(&bearer).events == [.response(id, .readResponse(value: [0x07]))])
    }

    @Test func exchangeMTUSetsTheSmallerOfBothRxMTUs() throws {
        var bearer = ATTBearer(preferredMTU: 247)
        let id = try bearer.exchangeMTU(now: .zero)
        #expect(drain(&bearer).sent == [[0x02, 0xF7, 0x00]])
        bearer.receive([0x03, 0x40, 0x00], now: .zero)
        #expect(drain(&bearer).events == [.mtuChanged(64), .response(id, .exchangeMTUResponse(serverRxMTU: 64))])
        #expect(bearer.mtu == 64)
    }

    @Test func serverRxMTUBelow23LeavesTheDefault() throws {
        var bearer = ATTBearer(preferredMTU: 247)
        _ = try bearer.exchangeMTU(now: .zero)
        bearer.receive([0x03, 0x10, 0x00], now: .zero)
        #expect(bearer.mtu == 23)
        #expect(!drain(&bearer).events.contains(.mtuChanged(16)))
    }

    @Test func requestLongerThanTheMTUIsRefused() throws {
        var bearer = ATTBearer()
        #expect(throws: ATTBearerError.pduTooLong(length: 24, mtu: 23)) {
            _ = try bearer.send(request: .writeRequest(handle: 3, value: Array(repeating: 0, count: 21)[...]), now: .zero)
        }
        #expect(throws: ATTBearerError.pduTooLong(length: 24, mtu: 23)) {
            try bearer.send(command: .writeCommand(handle: 3, value: Array(repeating: 0, count: 21)[...]))
        }
        _ = try bearer.send(request: .writeRequest(handle: 3, value: Array(repeating: 0, count: 20)[...]), now: .zero)
        #expect(drain(&bearer).sent.map(\.count) == [23])
    }

    @Test func onlyRequestsAndCommandsGoThroughTheirEntryPoints() {
        var bearer = ATTBearer()
        #expect(throws: ATTBearerError.notARequest(.writeCommand)) {
            _ = try bearer.send(request: .writeCommand(handle: 1, value: []), now: .zero)
        }
        #expect(throws: ATTBearerError.notACommand(.writeRequest)) {
            try bearer.send(command: .writeRequest(handle: 1, value: []))
        }
    }

    @Test func commandsAreNotHeldBackByAnOutstandingRequest() throws {
        var bearer = ATTBearer()
        _ = try bearer.send(request: .readRequest(handle: 3), now: .zero)
        try bearer.send(command: .writeCommand(handle: 9, value: [0xAA]))
        #expect(drain(&bearer).sent == [[0x0A, 0x03, 0x00], [0x52, 0x09, 0x00, 0xAA]])
    }

    @Test func notificationsAndIndicationsAreReportedAndIndicationsConfirmed() {
        var bearer = ATTBearer()
        bearer.receive([0x1B, 0x2A, 0x00, 0x64], now: .zero)
        bearer.receive([0x1D, 0x05, 0x00, 0x01], now: .zero)
        bearer.receive([0x23, 0x03, 0x00, 0x01, 0x00, 0x64, 0x07, 0x00, 0x00, 0x00], now: .zero)
        let out = drain(&bearer)
        #expect(out.sent == [[0x1E]], "an indication is confirmed")
        #expect(out.events.count == 3)
        #expect(out.events[0] == .notification(handle: 0x2A, value: [0x64]))
        #expect(out.events[1] == .indication(handle: 5, value: [0x01]))
        guard case .multipleNotification(let multiple) = out.events[2] else {
            Issue.record("expected a multiple notification, got \(out.events[2])")
            return
        }
        #expect(Array(multiple.entries).map(\.handle) == [3, 7])
    }

    @Test func indicationsAreConfirmedByHandWhenAsked() throws {
        var bearer = ATTBearer(autoConfirmIndications: false)
        #expect(throws: ATTBearerError.noIndicationToConfirm) { try bearer.confirmIndication() }
        bearer.receive([0x1D, 0x05, 0x00, 0x01], now: .zero)
        #expect(drain(&bearer).sent.isEmpty)
        try bearer.confirmIndication()
        #expect(drain(&bearer).sent == [[0x1E]])
    }

    @Test func malformedResponseFailsTheOutstandingRequestAndTheQueueMovesOn() throws {
        var bearer = ATTBearer()
        let first = try bearer.send(request: .findInformationRequest(startingHandle: 1, endingHandle: 5), now: .zero)
        let second = try bearer.send(request: .readRequest(handle: 2), now: .zero)
        _ = drain(&bearer)
        bearer.receive([0x05, 0x01, 0x01, 0x00, 0x00], now: .zero)
        let out = drain(&bearer)
        let error = DecodeError(.lengthMismatch(declared: 4, actual: 3), layer: "att", field: "Information Data", offset: 2)
        #expect(out.events == [.malformedPDU(error), .requestFailed(first, .malformedResponse(error))])
        #expect(out.sent == [[0x0A, 0x02, 0x00]])
        bearer.receive([0x0B], now: .zero)
        #expect(drain(&bearer).events == [.response(second, .readResponse(value: []))])
    }
}
