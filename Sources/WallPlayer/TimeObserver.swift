import Dispatch
import LockstepLocks
import LockstepTime

/// What `addPeriodicTimeObserver` and `addBoundaryTimeObserver` return; pass it to
/// `removeTimeObserver(_:)` to stop the callbacks.
public final class TimeObserverToken: Sendable, Hashable {
    let removed = Mutex(false)

    init() {}

    var isRemoved: Bool { removed.withLock { $0 } }

    public static func == (lhs: TimeObserverToken, rhs: TimeObserverToken) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// A registered time observer and its next alarm; lives on the player's control queue.
final class TimeObserver: @unchecked Sendable {
    enum Kind {
        case periodic(interval: MediaTime, block: @Sendable (MediaTime) -> Void)
        case boundary(times: [MediaTime], block: @Sendable () -> Void)
    }

    let token: TimeObserverToken
    let kind: Kind
    let queue: DispatchQueue?
    var alarm: ClockAlarm?

    init(token: TimeObserverToken, kind: Kind, queue: DispatchQueue?) {
        self.token = token
        self.kind = kind
        self.queue = queue
    }

    func cancelAlarm() {
        alarm?.cancel()
        alarm = nil
    }
}
