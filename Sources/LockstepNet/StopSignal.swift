import LockstepLocks

/// A one-shot signal that a service's `run()` waits on: fired by `stop()`, by a failure on the
/// service's thread, or by cancellation of the task running it.
///
/// Services here do their work on dedicated threads; their async `run()` only has to wait, without
/// holding a thread, until it is time to stop.
public final class StopSignal: Sendable {
    private struct State {
        var fired = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    public init() {}

    /// Whether the signal has fired.
    public var isFired: Bool { state.withLock { $0.fired } }

    /// Fires the signal, releasing every waiter. Later calls do nothing.
    public func fire() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.fired else { return [] }
            state.fired = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the signal fires; cancelling the waiting task fires it.
    public func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let fired = state.withLock { state -> Bool in
                    if state.fired { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if fired { continuation.resume() }
            }
        } onCancel: {
            fire()
        }
    }
}
