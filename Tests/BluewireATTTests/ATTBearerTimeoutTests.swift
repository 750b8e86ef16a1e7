import BluewireCore
import Testing

@testable import BluewireATT

/// The 30-second transaction timeout (Core Vol 3 Part F §3.3.3), run on passed-in time.
@Suite struct ATTBearerTimeoutTests {
    @Test func deadlineIsThirtySecondsAfterTheRequestWasSent() throws {
        var bearer = ATTBearer()
        #expect(bearer.deadline == nil)
        _ = try bearer.send(request: .readRequest(handle: 1), now: at(seconds: 5))
        _ = try bearer.send(request: .readRequest(handle: 2), now: at(seconds: 6))
        #expect(bearer.deadline == at(seconds: 35))
        bearer.receive([0x0B], now: at(seconds: 10))
        #expect(bearer.deadline == at(seconds: 40), "the queued request's clock starts when it is sent")
    }

    @Test func unansweredRequestClosesTheBearerAndFailsEverything() throws {
        var bearer = ATTBearer()
        let first = try bearer.send(request: .readRequest(handle: 1), now: .zero)
        let queued = try bearer.send(request: .readRequest(handle: 2), now: .zero)
        _ = drain(&bearer)
        bearer.advanceTime(to: at(seconds: 29, plus: 999_999))
        #expect(drain(&bearer).events.isEmpty && !bearer.isClosed)
        bearer.advanceTime(to: at(seconds: 30))
        #expect(drain(&bearer) == ([], [
            .requestFailed(first, .transactionTimeout),
            .requestFailed(queued, .closed),
            .closed(.transactionTimeout(.readRequest)),
        ]))
        #expect(bearer.isClosed && bearer.deadline == nil)
    }

    @Test func closedBearerSendsNothingMore() throws {
        var bearer = ATTBearer()
        _ = try bearer.send(request: .readRequest(handle: 1), now: .zero)
        bearer.advanceTime(to: at(seconds: 31))
        _ = drain(&bearer)
        #expect(throws: ATTBearerError.closed) { _ = try bearer.send(request: .readRequest(handle: 1), now: at(seconds: 32)) }
        #expect(throws: ATTBearerError.closed) { try bearer.notify(handle: 1, value: []) }
        #expect(throws: ATTBearerError.closed) { _ = try bearer.indicate(handle: 1, value: [], now: at(seconds: 32)) }
        // A late response, a request or an indication from the peer gets nothing back.
        bearer.receive([0x0B], now: at(seconds: 33))
        bearer.receive([0x0A, 0x01, 0x00], now: at(seconds: 33))
        bearer.receive([0x1D, 0x01, 0x00], now: at(seconds: 33))
        #expect(drain(&bearer) == ([], []))
    }

    @Test func responseArrivingAfterTheDeadlineDoesNotCompleteTheRequest() throws {
        var bearer = ATTBearer()
        let id = try bearer.send(request: .readRequest(handle: 1), now: .zero)
        _ = drain(&bearer)
        bearer.receive([0x0B, 0x01], now: at(seconds: 30, plus: 1))
        #expect(drain(&bearer).events == [.requestFailed(id, .transactionTimeout), .closed(.transactionTimeout(.readRequest))])
    }

    @Test func unconfirmedIndicationClosesTheBearer() throws {
        var bearer = ATTBearer()
        let first = try bearer.indicate(handle: 5, value: [1], now: .zero)
        let second = try bearer.indicate(handle: 5, value: [2], now: .zero)
        _ = drain(&bearer)
        bearer.advanceTime(to: at(seconds: 30))
        #expect(drain(&bearer).events == [
            .indicationFailed(first, .transactionTimeout),
            .indicationFailed(second, .closed),
            .closed(.transactionTimeout(.handleValueIndication)),
        ])
    }

    @Test func disconnectionFailsPendingWorkWithoutATimeout() throws {
        var bearer = ATTBearer()
        let request = try bearer.send(request: .readRequest(handle: 1), now: .zero)
        let indication = try bearer.indicate(handle: 5, value: [1], now: .zero)
        _ = drain(&bearer)
        bearer.disconnected()
        #expect(drain(&bearer).events == [
            .requestFailed(request, .disconnected),
            .indicationFailed(indication, .disconnected),
            .closed(.disconnected),
        ])
        #expect(throws: ATTBearerError.disconnected) { _ = try bearer.send(request: .readRequest(handle: 1), now: .zero) }
    }
}
