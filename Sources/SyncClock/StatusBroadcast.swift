import LockstepLocks
import LockstepTime

/// The latest clock status and its subscribers: what `SyncClockClient` and `ClockSources` publish.
final class StatusBroadcast: Sendable {
    private struct State {
        var status: ClockStatus
        var finished = false
        var subscribers: [Int: AsyncStream<ClockStatus>.Continuation] = [:]
        var nextSubscriber = 0
    }

    private let state: Mutex<State>

    init(_ status: ClockStatus) {
        state = Mutex(State(status: status))
    }

    /// The latest status.
    var status: ClockStatus { state.withLock { $0.status } }

    /// Replaces the latest status without telling subscribers.
    func refresh(_ status: ClockStatus) {
        state.withLock { $0.status = status }
    }

    /// Tells every subscriber of `status`, which `refresh` already made the latest (the callers
    /// store it first, so that their own callbacks read it, then tell the subscribers).
    func publish(_ status: ClockStatus) {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.yield(status) }
    }

    /// Every new status from now on, newest kept when the consumer falls behind; the stream ends
    /// with `finish()`.
    func updates(bufferingNewest limit: Int) -> AsyncStream<ClockStatus> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ClockStatus.self, bufferingPolicy: .bufferingNewest(limit))
        let finished = state.withLock { state -> Bool in
            guard !state.finished else { return true }
            let id = state.nextSubscriber
            state.nextSubscriber += 1
            state.subscribers[id] = continuation
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
            }
            return false
        }
        if finished { continuation.finish() }
        return stream
    }

    /// Ends every stream; later subscribers get an ended one.
    func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }

    /// Waits until the status is locked, and returns it.
    ///
    /// - Throws: `SyncClockError.notLocked` after `timeout` (measured on the task clock).
    func waitUntilLocked(timeout: MediaTime) async throws(SyncClockError) -> ClockStatus {
        let updates = updates(bufferingNewest: 64)
        let current = status
        if current.state == .locked { return current }
        let limit = max(0, timeout.nanoseconds ?? 0)
        let locked = await withTaskGroup(of: ClockStatus?.self) { group in
            group.addTask {
                for await status in updates where status.state == .locked { return status }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .nanoseconds(limit))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let locked else { throw .notLocked(timeout: timeout, state: status.state) }
        return locked
    }
}
