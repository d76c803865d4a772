import Dispatch
import LockstepLocks

/// Waiting, for a bounded time, for the one answer of work that reports through a callback.
///
/// For work a caller must never wait on for good: a read stuck in the kernel, a media pipeline
/// that never completes a seek. Whoever waits gets nil when the limit passes or its task is
/// cancelled (a service shutting down); the work itself is left to finish on its own, and an
/// answer it gives later is dropped.
public enum Deadline {
    /// The first answer `start` hands its callback, or nil when `limit` passes first or the
    /// calling task is cancelled.
    ///
    /// - Parameters:
    ///   - limit: how long to wait; a limit that is not numeric waits only for the answer or a
    ///     cancellation.
    ///   - start: begins the work, handing it the callback that answers; later answers are ignored.
    public static func firstAnswer<Answer: Sendable>(
        within limit: MediaTime, _ start: (@escaping @Sendable (Answer) -> Void) -> Void
    ) async -> Answer? {
        let waiter = FirstAnswer<Answer>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Answer?, Never>) in
                waiter.install(continuation)
                start { waiter.answer($0) }
                if let nanoseconds = limit.nanoseconds, limit.isNumeric {
                    DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(max(nanoseconds, 0)))) {
                        waiter.answer(nil)
                    }
                }
            }
        } onCancel: {
            waiter.answer(nil)
        }
    }
}

/// A continuation resumed once, by whichever comes first: the answer, the deadline or a
/// cancellation (which may come before the continuation exists).
private final class FirstAnswer<Answer: Sendable>: Sendable {
    private enum State {
        case waiting(CheckedContinuation<Answer?, Never>?)
        case answered
    }

    private let state = Mutex(State.waiting(nil))

    func install(_ continuation: CheckedContinuation<Answer?, Never>) {
        let early = state.withLock { state -> Bool in
            guard case .waiting = state else { return true }
            state = .waiting(continuation)
            return false
        }
        if early { continuation.resume(returning: nil) }
    }

    func answer(_ answer: Answer?) {
        let waiting = state.withLock { state -> CheckedContinuation<Answer?, Never>? in
            guard case .waiting(let continuation) = state else { return nil }
            state = .answered
            return continuation
        }
        waiting?.resume(returning: answer)
    }
}
