@_spi(Testing) import Bluewire
import Testing

/// `onSharedExecutor(passing:_:)`, the call `BluetoothHost` makes into its `EngineHost` (and back)
/// without a hop: two actors on one serial executor, as the host and its engine are.
@Suite("Actor.onSharedExecutor: synchronous calls between actors sharing an executor")
struct SharedExecutorCallTests {
    actor Owner {
        var values: [Int] = []
        func record(_ value: Int) -> Int {
            values.append(value)
            return values.count
        }
    }

    actor Guest {
        let owner: Owner
        init(owner: Owner) { self.owner = owner }
        nonisolated var unownedExecutor: UnownedSerialExecutor { owner.unownedExecutor }

        /// Calls into the owner synchronously, as the shell calls its engine host.
        func forward(_ values: [Int]) -> [Int] {
            values.map { value in owner.onSharedExecutor(passing: value) { $0.record($1) } }
        }

        func ownerValues() -> [Int] { owner.onSharedExecutor { $0.values } }
    }

    @Test("on the shared executor the operation runs at once with the argument, on the other actor's state")
    func runsWithTheArgument() async {
        let owner = Owner()
        let guest = Guest(owner: owner)
        #expect(await guest.forward([7, 8, 9]) == [1, 2, 3], "each call sees the state the one before left")
        #expect(await guest.ownerValues() == [7, 8, 9])
        #expect(await owner.values == [7, 8, 9])
    }

    @Test("off that executor it traps, as assumeIsolated does, instead of touching the actor's state")
    func trapsOffTheExecutor() async {
        await #expect(processExitsWith: .failure) {
            let owner = Owner()
            _ = owner.onSharedExecutor(passing: 1) { $0.record($1) }
        }
    }
}
