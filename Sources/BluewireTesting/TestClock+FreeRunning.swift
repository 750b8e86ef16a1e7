import BluewireCore

extension TestClock {
    /// Lets virtual time flow on its own, `step` at a time and no faster than `step` per `interval` of
    /// real time, until the calling task is cancelled.
    ///
    /// For scenarios where time must pass without the test stepping it: a `VirtualLink` with radio
    /// timing advertises and holds connection events only as time passes, while hosts on it exchange
    /// packets at their own pace. Advancing stays deterministic (due actions and sleepers run in
    /// deadline order, see `advance(to:)`); the real-time pause only bounds how far virtual time can
    /// run ahead of hosts doing real work, so a 2 s command timeout is not reached while a host is
    /// still handling the reply it already has. The default runs time at most 10 times faster than
    /// real time. A test that can step the clock itself should: this is for free-running scenes.
    public func runFreely(step: TimeSpan = .milliseconds(1), every interval: Duration = .microseconds(100)) async {
        while !Task.isCancelled {
            await advance(by: step)
            do { try await Task.sleep(for: interval) } catch { return }
        }
    }
}
