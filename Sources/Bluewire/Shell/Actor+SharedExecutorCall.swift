extension Actor {
    /// Runs `operation` with this actor's isolation, synchronously, from code already on its executor:
    /// `Actor.assumeIsolated` for a call that passes what it needs as `argument` instead of capturing it.
    ///
    /// `BluetoothHost` and its `EngineHost` share one serial executor and call each other synchronously
    /// (Host.swift). `assumeIsolated` takes a non-escaping closure and makes it escaping to call it as
    /// nonisolated (`withoutActuallyEscaping`), which cost two allocations per call, whether the
    /// closure captured anything or not (heaptrack, on a loop of calls between two actors sharing an
    /// executor). Here `operation` is escaping from the start and should capture nothing: the compiler
    /// then passes it without a context, and the call allocates nothing. Traps, as `assumeIsolated`
    /// does, when not on this actor's executor.
    @inline(__always)
    package nonisolated func onSharedExecutor<Argument, Value>(
        passing argument: Argument, _ operation: @escaping (isolated Self, Argument) -> Value
    ) -> Value {
        preconditionIsolated("called off the executor the host and its engine share")
        // The same cast `assumeIsolated` makes: the isolated parameter is an ordinary one in the ABI.
        return unsafeBitCast(operation, to: ((Self, Argument) -> Value).self)(self, argument)
    }

    /// `onSharedExecutor(passing:_:)` for a call that needs nothing but the actor.
    @inline(__always)
    package nonisolated func onSharedExecutor<Value>(_ operation: @escaping (isolated Self) -> Value) -> Value {
        preconditionIsolated("called off the executor the host and its engine share")
        return unsafeBitCast(operation, to: ((Self) -> Value).self)(self)
    }
}
