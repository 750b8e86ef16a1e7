import BluewireCore
import Testing

@testable import BluewireATT

/// Server-side transactions scripted byte for byte.
@Suite struct ATTBearerServerTests {
    @Test func peerRequestIsSurfacedAndAnsweredOnce() throws {
        var bearer = ATTBearer()
        bearer.receive([0x0A, 0x03, 0x00], now: .zero)
        #expect(drain(&bearer) == ([], [.request(.readRequest(handle: 3))]))
        try bearer.respond(.readResponse(value: [0x42]))
        #expect(drain(&bearer).sent == [[0x0B, 0x42]])
        #expect(throws: ATTBearerError.noRequestToRespondTo) { try bearer.respond(.readResponse(value: [0x42])) }
    }

    @Test func responseMustAnswerThePeersRequest() throws {
        var bearer = ATTBearer()
        bearer.receive([0x12, 0x03, 0x00, 0x01], now: .zero)
        #expect(throws: ATTBearerError.responseDoesNotMatchRequest(request: .writeRequest, response: .readResponse)) {
            try bearer.respond(.readResponse(value: []))
        }
        #expect(throws: ATTBearerError.responseDoesNotMatchRequest(request: .writeRequest, response: .errorResponse)) {
            try bearer.respond(.errorResponse(requestOpcode: .readRequest, handle: 3, error: .writeNotPermitted))
        }
        try bearer.respond(.errorResponse(requestOpcode: .writeRequest, handle: 3, error: .writeNotPermitted))
        #expect(drain(&bearer).sent == [[0x01, 0x12, 0x03, 0x00, 0x03]])
    }

    @Test func readResponseValueIsCutToMTUMinusOne() throws {
        var bearer = ATTBearer()
        bearer.receive([0x0A, 0x03, 0x00], now: .zero)
        try bearer.respond(.readResponse(value: Array(repeating: 7, count: 40)[...]))
        let sent = drain(&bearer).sent
        #expect(sent.map(\.count) == [23] && sent.first?.first == 0x0B)
    }

    @Test func exchangeMTURequestIsAnsweredByTheBearer() {
        var bearer = ATTBearer(preferredMTU: 517)
        bearer.receive([0x02, 0x17, 0x02], now: .zero)
        #expect(drain(&bearer) == ([[0x03, 0x05, 0x02]], [.mtuChanged(517)]))
        #expect(bearer.mtu == 517)
        // The MTU may not change again on this bearer.
        bearer.receive([0x02, 0x40, 0x00], now: .zero)
        #expect(drain(&bearer) == ([[0x03, 0x05, 0x02]], []))
        #expect(bearer.mtu == 517)
    }

    @Test func unknownRequestGetsRequestNotSupportedAndUnknownCommandIsIgnored() {
        var bearer = ATTBearer()
        bearer.receive([0x3F, 0x01, 0x02], now: .zero)
        #expect(drain(&bearer) == ([[0x01, 0x3F, 0x00, 0x00, 0x06]], []))
        bearer.receive([0x7F, 0x01], now: .zero)
        #expect(drain(&bearer) == ([], [.unexpectedPDU(ATTOpcode(0x7F))]))
    }

    @Test func malformedRequestGetsInvalidPDU() {
        var bearer = ATTBearer()
        bearer.receive([0x0A, 0x03], now: .zero)
        let out = drain(&bearer)
        #expect(out.sent == [[0x01, 0x0A, 0x00, 0x00, 0x04]])
        #expect(out.events == [.malformedPDU(DecodeError(.truncated(needed: 2, available: 1), layer: "att", field: "Attribute Handle", offset: 1))])
    }

    @Test func commandsAreSurfacedWithoutAnAnswer() {
        var bearer = ATTBearer()
        bearer.receive([0x52, 0x09, 0x00, 0xAA], now: .zero)
        #expect(drain(&bearer) == ([], [.command(.writeCommand(handle: 9, value: [0xAA]))]))
        #expect(throws: ATTBearerError.noRequestToRespondTo) { try bearer.respond(.writeResponse) }
    }

    @Test func notificationValueIsCutToMTUMinusThree() throws {
        var bearer = ATTBearer()
        try bearer.notify(handle: 0x2A, value: Array(0..<30)[...])
        #expect(drain(&bearer).sent == [[0x1B, 0x2A, 0x00] + Array(0..<20)])
    }

    @Test func encodedNotificationIsSentAsItIsAndCutToTheMTU() throws {
        var bearer = ATTBearer()
        try bearer.notify(encoded: [0x1B, 0x2A, 0x00, 0x01, 0x02])
        try bearer.notify(encoded: [0x1B, 0x2A, 0x00] + Array(0..<30))
        #expect(drain(&bearer).sent == [[0x1B, 0x2A, 0x00, 0x01, 0x02], [0x1B, 0x2A, 0x00] + Array(0..<20)])
    }

    @Test func encodedPDUsOtherThanNotificationsAreRefused() {
        var bearer = ATTBearer()
        #expect(throws: ATTBearerError.notACommand(.handleValueIndication)) { try bearer.notify(encoded: [0x1D, 0x2A, 0x00, 0x01]) }
        #expect(throws: ATTBearerError.notACommand(.readRequest)) { try bearer.notify(encoded: [0x0A, 0x01, 0x00]) }
        #expect(throws: ATTBearerError.notACommand(.handleValueNotification)) { try bearer.notify(encoded: [0x1B, 0x2A]) }
        #expect(throws: ATTBearerError.notACommand(ATTOpcode(0))) { try bearer.notify(encoded: []) }
        #expect(drain(&bearer).sent.isEmpty)
    }

    @Test func nextIndicationWaitsForTheConfirmation() throws {
        var bearer = ATTBearer()
        let first = try bearer.indicate(handle: 5, value: [1], now: .zero)
        let second = try bearer.indicate(handle: 5, value: [2], now: .zero)
        #expect(drain(&bearer).sent == [[0x1D, 0x05, 0x00, 0x01]])
        #expect(bearer.pendingIndicationCount == 2)
        bearer.receive([0x1E], now: at(seconds: 1))
        #expect(drain(&bearer) == ([[0x1D, 0x05, 0x00, 0x02]], [.indicationConfirmed(first)]))
        bearer.receive([0x1E], now: at(seconds: 2))
        #expect(drain(&bearer) == ([], [.indicationConfirmed(second)]))
        bearer.receive([0x1E], now: at(seconds: 3))
        #expect(drain(&bearer) == ([], [.unexpectedPDU(.handleValueConfirmation)]))
    }
}
