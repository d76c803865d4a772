import LockstepTime
import WallTimeline

/// What the state machine asks of the player: the driver (`Follower`) carries each out, in order,
/// and reports the outcome of those that take time as the next event.
public enum FollowerAction: Hashable, Sendable {
    /// Load `preparation`'s passes and get the first ready (prerolled, or held on its frame); then
    /// report `FollowerStateMachine.prepared(_:outcome:now:)`.
    case prepare(Preparation)
    /// Start presenting `itemTime` of the current pass at `presentAt` on the master clock
    /// (`setRate(_:time:atHostTime:)`); display latency is taken off already.
    case start(rate: PlaybackRate, itemTime: MediaTime, presentAt: MediaTime)
    /// Put the frame a preparation held (`Preparation.hold`, item time `itemTime`) on the glass at
    /// `presentAt` on the master clock, through the sink: prepared undrawn (in standby behind the
    /// player on the screen, or on it while it showed the playlist), it takes the screen then;
    /// prepared on a screen that showed nothing of the playlist, it shows already.
    case presentHeld(itemTime: MediaTime, presentAt: MediaTime)
    /// Pause the running player at `presentAt` on the master clock.
    case pause(presentAt: MediaTime)
    /// Queue `pass` behind the passes the player holds.
    case enqueue(Pass)
    /// What the player does when a pass ends with none queued behind it: move on (true), or hold
    /// the last frame (false, the end of a playlist that does not loop).
    case advanceAtItemEnd(Bool)
    /// While paused, move exactly to `itemTime` and show it; then report
    /// `FollowerStateMachine.pausedFrameShown(answered:now:)`.
    case showExactFrame(itemTime: MediaTime)
    /// Take the player off the screen and show `show` from `presentAt` on the master clock.
    case show(TimelineShow, presentAt: MediaTime)
    /// Keep `timeline` in place of the stored one (the machine moved it onto a new epoch).
    case store(Timeline)
    /// Something worth a line in the log.
    case note(FollowerNote)
}

/// An anchor being prepared: the passes to load, and whether the first is to be started or held.
public struct Preparation: Hashable, Sendable {
    /// Names this preparation in `prepared(_:outcome:now:)`: a stale one is recognised.
    public let id: UInt64
    /// The first pass (from where the anchor starts in it) and those queued behind it.
    public let passes: [Pass]
    /// Paused or ended: the item time to show exactly and hold; nil: preroll for a start.
    public let hold: MediaTime?
    /// Start on a new pipeline: nothing of the old one (a wedged queue, an error on its bus) may
    /// hold the new start.
    public let renewPipeline: Bool
    /// Whether the player moves on when the last queued pass ends (see `FollowerAction.advanceAtItemEnd`).
    public let advanceAtItemEnd: Bool
}

extension Pass {
    /// The content node `node` plays for this pass, when the wall distributes it.
    public func content(forNode node: String) -> ContentID? { tileContent?[node] ?? content }
}

/// One pass of a playlist entry as the player plays it: its media (a template with `{id}` for
/// pre-split tiles) from `start` to `end`.
public struct Pass: Hashable, Sendable {
    public let media: String
    /// Where the player starts in the media (`playbackStartTime`).
    public let start: MediaTime
    /// Where it stops, exclusive (`forwardPlaybackEndTime`).
    public let end: MediaTime
    public let entryIndex: Int
    public let pass: Int
    /// The content a node plays for it when the wall distributes it (each node's own for tiles).
    let content: ContentID?
    let tileContent: [String: ContentID]?

    init(_ position: TimelinePosition, from start: MediaTime) {
        content = position.entry.content
        tileContent = position.entry.tileContent
        media = position.entry.media
        self.start = start
        end = position.entry.outPoint
        entryIndex = position.entryIndex
        pass = position.pass
    }
}

/// What the player answered to a preparation.
public enum PreparationOutcome: Hashable, Sendable {
    case ready
    /// Why it could not (a file missing, a load that timed out, a preroll with no answer).
    case failed(String)
}

/// Events of the machine worth a log line, with what an operator needs to read them.
public enum FollowerNote: Hashable, Sendable {
    case anchored(version: UInt64, entry: Int, pass: Int, itemTime: MediaTime, at: MediaTime, aheadBy: MediaTime)
    /// A held frame ready `aheadBy` before its time (negative: after it).
    case holding(version: UInt64, state: TimelinePosition.State, itemTime: MediaTime, aheadBy: MediaTime)
    case showing(version: UInt64, show: TimelineShow, at: MediaTime)
    case pauseScheduled(at: MediaTime)
    case resumeScheduled(at: MediaTime)
    case readyTooLate(lateBy: MediaTime, newLead: MediaTime)
    case anchorFailed(String)
    case rejoining(reason: String, rejoins: Int)
    case epochMoved(epoch: UInt64, version: UInt64)
    case epochMoveFailed(String)
    case playerRefused(String)
}
