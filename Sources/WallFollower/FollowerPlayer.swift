import LockstepTime
import WallTimeline

/// The player as the follower drives it: the few things a node's reconcile loop asks of it. The
/// node implements it on WallPlayer's `QueuePlayer`; tests implement it in simulated time.
public protocol FollowerPlayer: AnyObject, Sendable {
    /// Loads the passes (the first from its start), on a new pipeline when asked; holds
    /// `preparation.hold` exactly, or prerolls for a start.
    func prepare(_ preparation: Preparation) async -> PreparationOutcome
    /// `setRate(_:time:atHostTime:)`: presents `itemTime` at `presentAt` on the master clock.
    func start(rate: PlaybackRate, itemTime: MediaTime, presentAt: MediaTime) throws
    /// Puts the frame the last preparation held (item time `itemTime`) on the glass at `presentAt`
    /// on the master clock, where it was prepared undrawn; nothing where it shows already.
    func presentHeld(itemTime: MediaTime, presentAt: MediaTime) throws
    /// Pauses at `presentAt` on the master clock.
    func pause(presentAt: MediaTime) throws
    func enqueue(_ pass: Pass)
    func setAdvancesAtItemEnd(_ advances: Bool)
    /// While paused, moves exactly to `itemTime`: whether that finished, nil when the player gave no
    /// answer in time.
    func showExactFrame(itemTime: MediaTime) async -> Bool?
    /// Shows `show` in the player's place from `presentAt` on the master clock: prepared now, on the
    /// glass at that time (at once when it has passed).
    func show(_ show: TimelineShow, presentAt: MediaTime) async
    /// The passes the player holds: the current one and those queued.
    var queuedPasses: Int { get }
    var isPaused: Bool { get }
    var latestFrame: FrameSample? { get }
}

/// The master clock as the follower reads it.
public protocol FollowerClock: Sendable {
    func reading() -> ClockReading
    /// All the time this process stood still so far (stopped, paused, starved of the CPU): time
    /// that passed on the clock but was no preparation's.
    func stoodStill() -> MediaTime
}

extension FollowerClock {
    public func stoodStill() -> MediaTime { StandStillMonitor.process.total() }
}

/// Where a node keeps the timeline it follows, so that a restart comes back to it.
public protocol TimelineKeeper: Sendable {
    func keep(_ timeline: Timeline) throws(TimelineStoreError)
}

extension TimelineStore: TimelineKeeper {
    public func keep(_ timeline: Timeline) throws(TimelineStoreError) { try save(timeline) }
}
