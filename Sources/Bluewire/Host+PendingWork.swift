extension BluetoothHost {
    /// What the host's engine shell still holds that someone waits on (`EngineHost.pendingWork`:
    /// requests such as a connect under way, event streams, state waiters, the timer). All zero once
    /// `close()` returned: a closed host leaves no task, continuation or timer behind.
    public var pendingWork: EngineHost.PendingWork {
        engineHost.onSharedExecutor { $0.pendingWork }
    }
}
