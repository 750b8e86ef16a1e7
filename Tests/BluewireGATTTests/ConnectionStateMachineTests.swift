import BluewireGATT
import Synchronization
import Testing

/// The expected transition table, written out by hand from Docs/Design.md and the documented choices,
/// independently of the implementation's `switch`. One row per state, one column per trigger, in
/// this column order:
///
///   StartScan StopScan ScanCompleted DeviceFound Connect Connected DiscoverServices
///   DiscoverCharacteristics Read Write EnableNotifications DisableNotifications OperationCompleted
///   Disconnect Failure Reset
///
/// `.` means refused. Codes: I Initial, S Scanning, C Connecting, Id Idle, DS DiscoveringServices,
/// DC DiscoveringCharacteristics, DCh DiscoveredCharacteristic, R0/R1 ReadingCharacteristic with
/// notifications off/on, W0/W1 WritingCharacteristic off/on, N NotificationsEnabled, E Error.
private let expectedMatrix = """
    I   : S  .  .  .  C  .  .  .  .  .  .  .   .   .  E  .
    S   : .  I  I  S  C  .  .  .  .  .  .  .   .   .  E  .
    C   : .  .  .  .  .  Id .  .  .  .  .  .   .   I  E  .
    Id  : .  .  .  .  .  .  DS DC .  .  .  .   .   I  E  .
    DS  : .  .  .  .  .  .  .  .  .  .  .  .   Id  I  E  .
    DC  : .  .  .  .  .  .  .  .  .  .  .  .   DCh I  E  .
    DCh : .  .  .  .  .  .  DS DC R0 W0 N  .   .   I  E  .
    R0  : .  .  .  .  .  .  .  .  .  .  .  .   DCh I  E  .
    R1  : .  .  .  .  .  .  .  .  .  .  .  .   N   I  E  .
    W0  : .  .  .  .  .  .  .  .  .  .  .  .   DCh I  E  .
    W1  : .  .  .  .  .  .  .  .  .  .  .  .   N   I  E  .
    N   : .  .  .  .  .  .  DS .  R1 W1 .  DCh .   I  E  .
    E   : .  .  .  .  .  .  .  .  .  .  .  .   .   .  .  I
    """

private let columnOrder: [ConnectionTrigger] = [
    .startScan, .stopScan, .scanCompleted, .deviceFound, .connect, .connected, .discoverServices,
    .discoverCharacteristics, .read, .write, .enableNotifications, .disableNotifications, .operationCompleted,
    .disconnect, .failure, .reset,
]

private let stateCodes: [String: ConnectionState] = [
    "I": .disconnected(.initial), "S": .disconnected(.scanning), "C": .disconnected(.connecting),
    "Id": .connected(.idle), "DS": .connected(.discoveringServices), "DC": .connected(.discoveringCharacteristics),
    "DCh": .connected(.discoveredCharacteristic),
    "R0": .connected(.readingCharacteristic(notificationsEnabled: false)),
    "R1": .connected(.readingCharacteristic(notificationsEnabled: true)),
    "W0": .connected(.writingCharacteristic(notificationsEnabled: false)),
    "W1": .connected(.writingCharacteristic(notificationsEnabled: true)),
    "N": .connected(.notificationsEnabled), "E": .error,
]

private struct ExpectedCell {
    var state: ConnectionState
    var trigger: ConnectionTrigger
    var next: ConnectionState?
}

private func parseMatrix() -> [ExpectedCell] {
    var cells: [ExpectedCell] = []
    for line in expectedMatrix.split(separator: "\n") {
        let halves = line.split(separator: ":")
        let rowCode = String(halves[0].filter { $0 != " " })
        let entries = halves[1].split(separator: " ").map(String.init)
        guard let state = stateCodes[rowCode], entries.count == columnOrder.count else {
            Issue.record("malformed expected row: \(line)")
            continue
        }
        for (trigger, entry) in zip(columnOrder, entries) {
            cells.append(ExpectedCell(state: state, trigger: trigger, next: entry == "." ? nil : stateCodes[entry]))
        }
    }
    return cells
}

@Suite("Connection state machine")
struct ConnectionStateMachineTests {
    @Test("The expected matrix covers every state and every trigger exactly once")
    func expectedMatrixIsComplete() {
        let cells = parseMatrix()
        #expect(cells.count == ConnectionState.allStates.count * ConnectionTrigger.allCases.count)
        #expect(Set(cells.map(\.state)) == Set(ConnectionState.allStates))
        #expect(Set(columnOrder) == Set(ConnectionTrigger.allCases))
        #expect(ConnectionState.allStates.count == 13)
    }

    @Test("Every state × trigger pair does what the documented table says")
    func everyPairMatchesTheTable() {
        for cell in parseMatrix() {
            var machine = ConnectionStateMachine(state: cell.state)
            do {
                let transition = try machine.fire(cell.trigger)
                if let next = cell.next {
                    #expect(transition.to == next, "\(cell.state) on \(cell.trigger)")
                    #expect(transition.from == cell.state)
                    #expect(transition.trigger == cell.trigger)
                    #expect(machine.state == next, "\(cell.state) on \(cell.trigger): machine state")
                } else {
                    Issue.record("\(cell.state) accepted \(cell.trigger) (→ \(transition.to)); table says refused")
                }
            } catch {
                #expect(cell.next == nil, "\(cell.state) refused \(cell.trigger); table says → \(String(describing: cell.next))")
                #expect(error.state == cell.state)
                #expect(error.trigger == cell.trigger)
                #expect(machine.state == cell.state, "a refusal must leave the state unchanged")
            }
            #expect(ConnectionStateMachine(state: cell.state).accepts(cell.trigger) == (cell.next != nil))
        }
    }

    @Test("Disconnect and Failure in connected substates are handled by the Connected superstate")
    func superstateHandlesDisconnectAndFailure() throws {
        for sub in ConnectionState.Connected.allCases {
            for trigger in [ConnectionTrigger.disconnect, .failure] {
                let transition = try #require(ConnectionStateMachine.transition(from: .connected(sub), on: trigger))
                #expect(transition.handledBy == .connectedSuperstate, "\(sub) on \(trigger)")
            }
        }
        for sub in ConnectionState.Disconnected.allCases {
            let transition = try #require(ConnectionStateMachine.transition(from: .disconnected(sub), on: .failure))
            #expect(transition.handledBy == .disconnectedSuperstate)
        }
        // Connecting's own Disconnect (cancel the attempt) is a substate transition, not the superstate's.
        let cancel = try #require(ConnectionStateMachine.transition(from: .disconnected(.connecting), on: .disconnect))
        #expect(cancel.handledBy == .state)
    }

    @Test("A read before discovery is refused with an error naming the state and the trigger")
    func readBeforeDiscoveryIsRefused() throws {
        var machine = ConnectionStateMachine()
        try machine.fire(.connect)
        try machine.fire(.connected)
        #expect(throws: ConnectionTriggerRefused(state: .connected(.idle), trigger: .read)) {
            try machine.fire(.read)
        }
        let refusal = ConnectionTriggerRefused(state: .connected(.idle), trigger: .read)
        #expect(refusal.description == "connection state Connected.Idle refuses trigger Read")
    }

    @Test("The observer sees every transition taken, in order, and no refusal")
    func observerSeesTransitions() throws {
        let log = TransitionLog()
        var machine = ConnectionStateMachine(observer: { log.append($0) })
        try machine.fire(.startScan)
        try machine.fire(.deviceFound)
        try machine.fire(.connect)
        _ = try? machine.fire(.read)  // refused: not reported
        try machine.fire(.connected)
        try machine.fire(.discoverServices)
        try machine.fire(.operationCompleted)
        try machine.fire(.discoverCharacteristics)
        try machine.fire(.operationCompleted)
        try machine.fire(.enableNotifications)
        try machine.fire(.read)
        try machine.fire(.operationCompleted)
        try machine.fire(.disconnect)
        let seen = log.transitions
        #expect(seen.map(\.trigger) == [
            .startScan, .deviceFound, .connect, .connected, .discoverServices, .operationCompleted,
            .discoverCharacteristics, .operationCompleted, .enableNotifications, .read, .operationCompleted,
            .disconnect,
        ])
        #expect(seen[1].isSelfTransition)
        #expect(seen[10].from == .connected(.readingCharacteristic(notificationsEnabled: true)))
        #expect(seen[10].to == .connected(.notificationsEnabled), "a read while subscribed returns to NotificationsEnabled")
        #expect(seen.last?.to == .initial)
        for (earlier, later) in zip(seen, seen.dropFirst()) {
            #expect(earlier.to == later.from, "transitions must chain")
        }
    }

    @Test("Error accepts only Reset, which returns to Initial")
    func errorRecoversOnlyThroughReset() throws {
        var machine = ConnectionStateMachine(state: .connected(.writingCharacteristic(notificationsEnabled: false)))
        try machine.fire(.failure)
        #expect(machine.state == .error)
        #expect(machine.acceptedTriggers == [.reset])
        try machine.fire(.reset)
        #expect(machine.state == .initial)
    }
}

/// Collects transitions from the observer, which is called synchronously on the firing thread.
private final class TransitionLog: Sendable {
    private let mutex = Mutex<[ConnectionTransition]>([])
    func append(_ transition: ConnectionTransition) { mutex.withLock { $0.append(transition) } }
    var transitions: [ConnectionTransition] { mutex.withLock { $0 } }
}
