import Dispatch
import LockstepTime

/// The pipelines being stopped on their own threads, for a process about to exit. A player let go
/// stops its pipeline on a thread of its own and does not wait for it; a process that then returns
/// from `main` runs `exit`, which unloads what that thread is still using inside GStreamer (seen:
/// `wallnode play` ending with SIGSEGV in playbin's state change, about one run in twenty).
public enum PipelineTeardowns {
    static let group = DispatchGroup()

    /// Waits until every pipeline being stopped has stopped, for at most `limit` (a pipeline
    /// wedged inside GStreamer never stops); whether they all did.
    @discardableResult
    public static func wait(limit: MediaTime = Player.teardownLimit) -> Bool {
        let nanoseconds = Int(limit.nanoseconds ?? 0)
        return group.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success
    }
}
